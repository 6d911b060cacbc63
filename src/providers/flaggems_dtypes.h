/*
 * The dtype names FlagGems' `--dtypes` option accepts, read from the
 * checkout itself: its benchmark/conftest.py gives `choices=` to that
 * option, upstream as a comprehension over lists of torch dtypes kept in
 * benchmark/consts.py:
 *
 *     choices=[str(ele).split(".")[-1]
 *              for ele in consts.FLOAT_DTYPES + consts.INT_DTYPES
 *              + consts.BOOL_DTYPES + [torch.cfloat]]
 *
 * A revision or a fork may list more (or name them as strings); zlb takes
 * whatever the checkout it runs says, not a list of its own.
 */
#ifndef ZLB_PROVIDER_FLAGGEMS_DTYPES_H
#define ZLB_PROVIDER_FLAGGEMS_DTYPES_H

#include "lib/strbuf.h"
#include "lib/strvec.h"

/* The names of a build that could not read them (upstream's at ed2508bc). */
extern const char *const flaggems_default_dtypes[];

/*
 * Read the accepted names from <dir>/benchmark/conftest.py (and the lists
 * it takes from <dir>/benchmark/consts.py) into out, in the order given,
 * each once, as str(torch.<dtype>) ends ("complex64" for torch.cfloat).
 * Recognised: string literals that are dtype names, torch.<name> (torch's
 * aliases resolved: half, float, double, cfloat, ...), and list names of
 * consts.py (consts.X or X) whose torch.<name> entries are read there.
 * Returns 0; 1 when the file cannot be read or the option's choices
 * cannot be found or yield no name (why says which; out is left empty).
 */
int flaggems_dtype_choices(const char *dir, struct strvec *out, struct strbuf *why);

/* torch's canonical name for a torch attribute naming a dtype ("cfloat" -> "complex64"). */
const char *flaggems_torch_dtype_name(const char *attr);

#endif
