/*
 * Shape sets built into zlb, used when a run names no shape file
 * (shape mode "inline"). They are archived verbatim as the run's shapes.yaml.
 */
#ifndef ZLB_BUILTIN_SHAPES_H
#define ZLB_BUILTIN_SHAPES_H

struct builtin_shapes {
	const char *op;       /* operator (test function without test_) */
	const char *op_file;  /* its benchmark file stem, when it is not op */
	const char *yaml;     /* FlagGems shape-file text */
	const char *about;    /* one line saying where the shapes come from */
};

/* The built-in set for op, or NULL. */
const struct builtin_shapes *builtin_shapes_find(const char *op);

/* All of them, NULL-op terminated (for help). */
extern const struct builtin_shapes builtin_shape_sets[];

#endif
