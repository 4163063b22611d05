/* creds.c - credentials: real/effective/saved/fs uids and gids,
 * supplementary groups, capabilities and no_new_privs.
 *
 * Started as root, the program turns itself into an unprivileged process
 * with ids that differ in every slot (and fsuid/fsgid differing from the
 * effective ids, which setresuid() alone does not give), so a restored
 * process that keeps the restorer's root credentials, or sets only some
 * of them, fails.  The capability sets become empty by the uid change
 * (except the bounding set), which the restore must reproduce too.
 */
#include <linux/capability.h>

#include "tp.h"

#include <grp.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>

#define MAX_GROUPS	64

static const char *const status_keys[] = {
	"Uid:", "Gid:", "Groups:", "CapInh:", "CapPrm:", "CapEff:",
	"CapBnd:", "CapAmb:", "NoNewPrivs:",
};
#define NKEYS	(sizeof(status_keys) / sizeof(status_keys[0]))

struct creds {
	uid_t ruid, euid, suid, fsuid;
	gid_t rgid, egid, sgid, fsgid;
	int ngroups;
	gid_t groups[MAX_GROUPS];
	int nnp, dumpable;
	char status[NKEYS][256];
};

static void get_creds(struct creds *c)
{
	FILE *f;
	char line[256];

	memset(c, 0, sizeof(*c));
	getresuid(&c->ruid, &c->euid, &c->suid);
	getresgid(&c->rgid, &c->egid, &c->sgid);
	/* setfsuid() returns the old value; an invalid id changes nothing. */
	c->fsuid = setfsuid(-1);
	c->fsgid = setfsgid(-1);
	c->ngroups = getgroups(MAX_GROUPS, c->groups);
	c->nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	c->dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);

	f = fopen("/proc/self/status", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		for (size_t i = 0; i < NKEYS; i++)
			if (!strncmp(line, status_keys[i],
				     strlen(status_keys[i])))
				snprintf(c->status[i], sizeof(c->status[i]),
					 "%s", line);
	}
	fclose(f);
}

static void check_creds(const struct creds *b, const char *what)
{
	struct creds a;

	get_creds(&a);
	tp_check(a.ruid == b->ruid && a.euid == b->euid &&
		 a.suid == b->suid && a.fsuid == b->fsuid,
		 "%s: uids %d %d %d fs %d, want %d %d %d fs %d", what,
		 a.ruid, a.euid, a.suid, a.fsuid,
		 b->ruid, b->euid, b->suid, b->fsuid);
	tp_check(a.rgid == b->rgid && a.egid == b->egid &&
		 a.sgid == b->sgid && a.fsgid == b->fsgid,
		 "%s: gids %d %d %d fs %d, want %d %d %d fs %d", what,
		 a.rgid, a.egid, a.sgid, a.fsgid,
		 b->rgid, b->egid, b->sgid, b->fsgid);
	if (a.ngroups != b->ngroups)
		tp_fail("%s: %d supplementary groups, want %d", what,
			a.ngroups, b->ngroups);
	else
		for (int i = 0; i < a.ngroups; i++)
			tp_check(a.groups[i] == b->groups[i],
				 "%s: group[%d] %d, want %d", what, i,
				 a.groups[i], b->groups[i]);
	tp_check(a.nnp == b->nnp, "%s: no_new_privs %d, want %d", what,
		 a.nnp, b->nnp);
	tp_check(a.dumpable == b->dumpable, "%s: dumpable %d, want %d", what,
		 a.dumpable, b->dumpable);
	for (size_t i = 0; i < NKEYS; i++) {
		tp_check(b->status[i][0], "%s: no %s line in /proc/self/status",
			 what, status_keys[i]);
		tp_check(!strcmp(a.status[i], b->status[i]),
			 "%s: /proc/self/status %s is \"%.*s\", want \"%.*s\"",
			 what, status_keys[i],
			 (int)strcspn(a.status[i], "\n"), a.status[i],
			 (int)strcspn(b->status[i], "\n"), b->status[i]);
	}
}

int main(int argc, char **argv)
{
	static const gid_t groups[] = { 5, 6, 7 };
	struct creds want, before;
	int root;

	tp_init(argc, argv);
	root = geteuid() == 0;

	if (root) {
		/* a capability out of the bounding set for good (the CapBnd
		 * line is compared too; this reads it back directly) */
		if (prctl(PR_CAPBSET_DROP, CAP_SYS_BOOT, 0, 0, 0) != 0 ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    setgroups(3, groups) != 0 ||
		    setresgid(1001, 1002, 1003) != 0 ||
		    setresuid(1004, 1005, 1006) != 0) {
			tp_fail("setup: %s", strerror(errno));
			return 1;
		}
		/* Allowed unprivileged: each is one of the saved ids. */
		setfsuid(1006);
		setfsgid(1003);

		/* The setup must have produced exactly this. */
		memset(&want, 0, sizeof(want));
		want.ruid = 1004; want.euid = 1005; want.suid = 1006;
		want.fsuid = 1006;
		want.rgid = 1001; want.egid = 1002; want.sgid = 1003;
		want.fsgid = 1003;
		want.ngroups = 3;
		memcpy(want.groups, groups, sizeof(groups));
		want.nnp = 1;
		get_creds(&before);
		want.dumpable = before.dumpable;
		memcpy(want.status, before.status, sizeof(want.status));
		check_creds(&want, "setup");
		tp_check(!strcmp(before.status[0],
				 "Uid:\t1004\t1005\t1006\t1006\n"),
			 "setup: %s", before.status[0]);
		tp_check(!strcmp(before.status[1],
				 "Gid:\t1001\t1002\t1003\t1003\n"),
			 "setup: %s", before.status[1]);
		tp_check(!strncmp(before.status[5], "CapEff:\t0000000000000000",
				  24), "setup: %s", before.status[5]);
		if (tp_failures)
			return 1;
	} else {
		printf("note: not root, credentials not changed, "
		       "only compared\n");
		get_creds(&before);
	}

	tp_ready();
	tp_wait_go();

	check_creds(&before, "after restart");
	if (root)
		tp_check(prctl(PR_CAPBSET_READ, CAP_SYS_BOOT, 0, 0, 0) == 0,
			 "CAP_SYS_BOOT is back in the bounding set");
	if (root) {
		/* And the privileges really are gone, not just reported so:
		 * root could do both of these. */
		tp_check(setuid(0) != 0, "setuid(0) succeeded");
		tp_check(setgroups(0, NULL) != 0, "setgroups() succeeded");
	}
	return tp_done();
}
