/* rpc_fuzz.c - libFuzzer over what `ckpt swrk` makes of a request: the
 * protobuf-c decoding of CRIU's criu_req (src/criu/rpc.proto) and the
 * options of a DUMP or RESTORE turned into a job (rpc_map(): the
 * refusals, the flags, the mounts and inherited fds), nothing opened,
 * nothing run.  `make build/fuzz/rpc_fuzz`; test criu_rpc_libfuzzer. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "criu/criu.h"
#include "criu/rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	CriuReq *req = criu_req__unpack(NULL, size, data);
	struct criu_job *j;

	if (!req)
		return 0;
	j = calloc(1, sizeof(*j));
	if (j && req->opts) {
		j->images_dir = -1;
		j->logfd = -1;
		/* both ways, whatever the type says: more of the code */
		if (!rpc_map(j, req->opts, 1, true))
			for (int i = 0; i < j->nr_external; i++)
				if (!strchr(j->external[i], ':'))
					abort();
		memset(j, 0, sizeof(*j));
		rpc_map(j, req->opts, 1, false);
	}
	free(j);
	criu_req__free_unpacked(req, NULL);
	return 0;
}
