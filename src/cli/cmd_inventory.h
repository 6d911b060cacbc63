/*
 * What the two files of `zlb inventory` share: cmd_inventory.c builds the
 * inventory; cmd_inventory_shapes.c builds, migrates and checks suite shape
 * sets against it (--build-shapes, --migrate-shapes, --check-shapes).
 * Private to src/cli/.
 */
#ifndef ZLB_CLI_CMD_INVENTORY_H
#define ZLB_CLI_CMD_INVENTORY_H

#include "lib/options.h"

/*
 * Run the shape-set mode v asks for, with the inventory in ops_dir and (for
 * --build-shapes) the main checkout at checkout. Prints what it did;
 * returns the command's exit status.
 */
int inventory_shapes(const struct opt_def *defs, const struct opt_values *v,
		     const char *ops_dir, const char *checkout);

/* Which shape-set mode v asks for: "build", "migrate", "check", or NULL (none). */
const char *inventory_shapes_mode(const struct opt_def *defs, const struct opt_values *v);

#endif
