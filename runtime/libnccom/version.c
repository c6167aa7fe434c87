/* neuronGetVersionInfo and getNcclNrtGitHash (docs/sources.md#s001-4). */
#include <stdlib.h>
#include <string.h>

#include "nccom.h"

/* Parse "2.31.24.0" into major/minor/patch/maintenance. */
static void parse_version(uint64_t out[4])
{
	const char *p = NCCOM_VERSION_STRING;
	for (int i = 0; i < 4; i++) {
		char *end = NULL;
		out[i] = strtoull(p, &end, 10);
		if (end == p || *end == 0)
			break;
		p = end + 1;
	}
}

void neuronGetVersionInfo(nec_version_info_t *out, uint32_t n)
{
	if (out == NULL || n < offsetof(nec_version_info_t, git_hash))
		return; /* no room for the version words: nothing is written */
	uint64_t v[4] = {0};
	parse_version(v);
	out->major = v[0];
	out->minor = v[1];
	out->patch = v[2];
	out->maintenance = v[3];
	if (n > VERSION_INFO_GIT_HASH_AFTER) {
		memset(out->git_hash, 0, sizeof out->git_hash);
		strncpy(out->git_hash, NCCOM_REF_GIT_HASH, sizeof out->git_hash - 1);
	}
	if (n > VERSION_INFO_COMPAT_AFTER)
		out->compatibility_version = NCCOM_COMPAT_ID;
}

NRT_STATUS nccom_git_hash(nccl_nrt_git_hash_t *out)
{
	nec_version_info_t mine;
	memset(&mine, 0, sizeof mine);
	neuronGetVersionInfo(&mine, VERSION_INFO_SIZE);
	memcpy(out->nccom, mine.git_hash, sizeof out->nccom);
	nrt_version_t nrt;
	memset(&nrt, 0, sizeof nrt);
	NRT_STATUS rc = nrt_get_version(&nrt, sizeof nrt); /* reverse leg, @NRT_2.0.0 */
	if (rc != NRT_SUCCESS) {
		nccom_warn("getNcclNrtGitHash: nrt_get_version returned %d", rc);
		return rc;
	}
	memcpy(out->nrt, nrt.git_hash, sizeof out->nrt);
	return NRT_SUCCESS;
}

/* ncclGetVersion: upstream's PtrCheck, then the fork constant
 * (movl $0xbb7,(%rdi), seed 001 §4), never the release's 23124. */
ncclResult_t ncclGetVersion(int *version)
{
	if (version == NULL)
		return ncclInvalidArgument;
	*version = NCCOM_NCCL_VERSION;
	return ncclSuccess;
}
