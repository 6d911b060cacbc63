/*
 * Where a run ran, as its run_identity.json recorded it: the backend and
 * timer (caliber), the device index zlb run was given and the GPU's name
 * and uuid (provenance). The batch copies them into ops_status.csv and
 * zlb summary into its table, so both name the card each operator met
 * without the reader opening every identity.
 */
#ifndef ZLB_RUNDIR_RUN_DEVICE_H
#define ZLB_RUNDIR_RUN_DEVICE_H

struct run_device {
	char *backend;   /* caliber.backend; NULL: unrecorded */
	char *timer;     /* caliber.timer; NULL: unrecorded */
	int index;       /* provenance.device_index; -1: unrecorded */
	char *gpu_name;  /* provenance.gpu_name, else caliber.device (the model);
			    NULL: unrecorded or "unknown" */
	char *gpu_uuid;  /* provenance.gpu_uuid (device_uuid in older runs); NULL: none */
};

void run_device_init(struct run_device *d);
void run_device_release(struct run_device *d);

/*
 * Read <run_dir>/run_identity.json into d (released first). Returns 0, 1
 * when the run has no identity (d left empty), or -1 with error() for one
 * that cannot be read or is of another schema (d left empty): a reader
 * that only labels rows goes on without it.
 */
int run_device_read(const char *run_dir, struct run_device *d);

#endif
