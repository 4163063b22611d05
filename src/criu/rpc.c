/* rpc.c - a DUMP or RESTORE request's options (criu_opts) as a job:
 * what ckpt does as CRIU would, what it needs no word for, and what it
 * cannot do, refused by the option's name. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "criu.h"
#include "rpc.h"

/* The first option set that ckpt cannot honour, NULL if none.  Accepted
 * without a word: evasive_devices, link_remap, force_irmap and the like
 * (ckpt needs no such help), root at dump (ckpt reads the tree's own),
 * freeze_cgroup (ckpt stops the tree by ptrace; a frozen one is thawed
 * for it: freezer.c),
 * manage_cgroups and its mode, rst_sibling, notify_scripts,
 * orphan_pts_master at dump (a console's master outside the tree is
 * saved as such whatever it says; at restore it has its notification). */
static const char *unsupported(const CriuOpts *o)
{
	if (o->ps)
		return "ps (page server)";
	if (o->has_lazy_pages && o->lazy_pages)
		return "lazy_pages";
	if (o->has_auto_dedup && o->auto_dedup)
		return "auto_dedup";
	if (o->n_veths)
		return "veths";
	if (o->n_exec_cmd)
		return "exec_cmd";
	if (o->n_skip_mnt)
		return "skip_mnt";
	if (o->n_unix_sk_ino)
		return "unix_sk_ino";
	if (o->n_join_ns)
		return "join_ns (give the namespace by inherit_fd extRoot*NS)";
	/* runc always says net: it leaves the network to hooks; ckpt
	 * restores what the namespace held, which they may then change */
	if (o->has_empty_ns && (o->empty_ns & ~(uint32_t)CLONE_NEWNET))
		return "empty_ns (but for net)";
	if (o->cgroup_props || o->cgroup_props_file || o->n_cgroup_dump_controller)
		return "cgroup_props, cgroup_props_file, cgroup_dump_controller";
	if (o->has_status_fd)
		return "status_fd";
	/* (runc names /etc/criu/runc.conf always: one absent is none) */
	if (o->config_file && !access(o->config_file, F_OK))
		return "config_file (ckpt reads no CRIU configuration)";
	if (o->lsm_profile)
		return "lsm_profile";
	if (o->has_tls && o->tls)
		return "tls";
	if (o->has_pidfd_store_sk)
		return "pidfd_store_sk";
	if (o->has_network_lock && o->network_lock != CRIU_NETWORK_LOCK_METHOD__IPTABLES)
		return "network_lock (ckpt locks with iptables only)";
	if (o->has_unprivileged && o->unprivileged)
		return "unprivileged";
	if (o->has_leave_stopped && o->leave_stopped)
		return "leave_stopped";
	return NULL;
}

/* A directory the client gave by its fd: CRIU's rule, the fd is the
 * client's own (its pid from the socket), opened here by /proc. */
static int peer_dir(struct criu_job *j, pid_t peer, int fd, const char *what)
{
	char path[64];
	int dfd;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", peer, fd);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return criu_fail(j, errno, "%s %d of pid %d: %s", what, fd, peer, strerror(errno));
	return dfd;
}

/* The images directory, and the log in the work directory (or in the
 * images directory) as CRIU puts it. */
static int dirs(struct criu_job *j, const CriuOpts *o, pid_t peer)
{
	int work, fd;

	if (o->images_dir_fd >= 0)
		j->images_dir = peer_dir(j, peer, o->images_dir_fd, "images_dir_fd");
	else if (o->images_dir)
		j->images_dir = open(o->images_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	else
		return criu_fail(j, EINVAL, "neither images_dir_fd nor images_dir");
	if (j->images_dir < 0)
		return j->err ? -j->err : criu_fail(j, errno, "images_dir %s: %s", o->images_dir, strerror(errno));
	if (!o->log_file)
		return 0;
	if (strchr(o->log_file, '/') || !o->log_file[0] || !strcmp(o->log_file, ".."))
		return criu_fail(j, EINVAL, "log_file '%s': a name in the work directory, no path", o->log_file);
	work = o->has_work_dir_fd ? peer_dir(j, peer, o->work_dir_fd, "work_dir_fd") : j->images_dir;
	if (work < 0)
		return work;
	fd = openat(work, o->log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (work != j->images_dir)
		close(work);
	if (fd < 0)
		return criu_fail(j, errno, "log_file %s: %s", o->log_file, strerror(errno));
	j->logfd = fd;
	return 0;
}

/* "mnt[KEY]:PATH" of external; others (dev[], net[]...) are refused. */
static int external(struct criu_job *j, const char *e, bool dump)
{
	const char *close = strstr(e, "]:");

	if (strncmp(e, "mnt[", 4) || !close)
		return criu_fail(j, EOPNOTSUPP, "external %s: ckpt takes only mnt[KEY]:PATH", e);
	if (dump)	/* a container's host binds are saved by mountpoint anyway */
		return 0;
	char key[4096];

	if ((size_t)(close - e - 4) >= sizeof(key))
		return criu_fail(j, E2BIG, "external %s: too long", e);
	memcpy(key, e + 4, close - e - 4);
	key[close - e - 4] = 0;
	return criu_add_external(j, key, close + 2);
}

/* Mount maps and external resources.  At dump ckpt keys each host bind
 * of a container by its mountpoint, as runc names them; so only a map
 * under another key is refused.  runc's masked paths (a bind of the
 * container's own /dev/null) are the container's own mounts to ckpt,
 * saved in the image: their map is nothing to do.  At restore a map
 * binds KEY from VAL instead of the host path saved. */
static int mounts(struct criu_job *j, const CriuOpts *o, bool dump)
{
	int ret = 0;

	for (size_t i = 0; i < o->n_ext_mnt && !ret; i++) {
		const ExtMountMap *m = o->ext_mnt[i];

		if (!strcmp(m->val, "/dev/null") && strcmp(m->key, "/dev/null"))
			continue;
		/* runc names each of its devices so (/dev/null:/dev/null),
		 * bound or made by mknod: a bind is from that same path,
		 * which the image has saved; a node is the container's */
		if (!dump && !strcmp(m->key, m->val))
			continue;
		if (dump && strcmp(m->key, m->val))
			ret = criu_fail(j, EOPNOTSUPP, "ext_mnt %s:%s: ckpt keys a host bind by its mountpoint (%s)",
					m->key, m->val, m->key);
		else if (!dump)
			ret = criu_add_external(j, m->key, m->val);
	}
	for (size_t i = 0; i < o->n_external && !ret; i++)
		ret = external(j, o->external[i], dump);
	return ret;
}

/* parent_img: the pre-dump's images directory, relative to ours (runc
 * --parent-path); its image is the incremental dump's parent. */
int criu_set_parent(struct criu_job *j, const char *rel)
{
	if (!rel[0] || rel[0] == '/' || strlen(rel) > 4096)
		return criu_fail(j, EINVAL, "parent_img '%s': a directory relative to the images directory", rel);
	snprintf(j->parent, sizeof(j->parent), "/proc/self/fd/%d/%s/%s", j->images_dir,
		 rel, CRIU_IMAGE_NAME);
	j->flags |= CKPT_PARENT;
	return 0;
}

/* inherit_fd: runc's namespaces to join (extRootNetNS...) are our fds;
 * the container's stdio outside it is ckpt's own fds 0-2 anyway. */
static int inherited(struct criu_job *j, const CriuOpts *o)
{
	static const char *const ns[][2] = {
		{ "extRootNetNS", "net" }, { "extRootIpcNS", "ipc" }, { "extRootUtsNS", "uts" },
	};
	char path[64];

	for (size_t i = 0; i < o->n_inherit_fd; i++) {
		const InheritFd *f = o->inherit_fd[i];
		size_t k;
		int ret;

		for (k = 0; k < sizeof(ns) / sizeof(*ns) && strcmp(f->key, ns[k][0]); k++)
			;
		if (k < sizeof(ns) / sizeof(*ns)) {
			snprintf(path, sizeof(path), "/proc/self/fd/%d", f->fd);
			ret = criu_add_join_ns(j, ns[k][1], path);
			if (ret)
				return ret;
		} else if (f->fd < 0 || f->fd > 2) {
			return criu_fail(j, EOPNOTSUPP, "inherit_fd %s as fd %d: ckpt gives a container's outside stdio from its own fds 0-2 only",
					 f->key, f->fd);
		}
	}
	return 0;
}

int rpc_map(struct criu_job *j, const CriuOpts *o, pid_t peer, bool dump)
{
	const char *no = unsupported(o);
	int ret;

	if (no)
		return criu_fail(j, EOPNOTSUPP, "option %s: not supported by ckpt", no);
	if (o->has_log_level && o->log_level >= 4)
		j->flags |= CKPT_VERBOSE;
	if (o->has_shell_job && o->shell_job)
		j->flags |= CKPT_SHELL_JOB;
	if (o->has_tcp_close && o->tcp_close)
		j->flags |= CKPT_TCP_CLOSE;
	j->orphan_pts = !dump && o->has_orphan_pts_master && o->orphan_pts_master;
	for (size_t i = 0; i < o->n_cg_root; i++) {
		ret = criu_add_cgroup_root(j, o->cg_root[i]->ctrl, o->cg_root[i]->path);
		if (ret)
			return ret;
	}
	if (dump) {
		j->pid = o->has_pid ? o->pid : peer;
		j->freeze_cgroup = o->freeze_cgroup;
		if (!(o->has_leave_running && o->leave_running))
			j->flags |= CKPT_KILL;
		if (o->has_tcp_established && o->tcp_established)
			j->flags |= CKPT_TCP_ESTABLISHED;
		if (o->has_ext_unix_sk && o->ext_unix_sk)
			j->flags |= CKPT_EXTERNAL_UNIX;
		if (o->has_tcp_skip_in_flight && o->tcp_skip_in_flight)
			j->flags |= CKPT_SKIP_IN_FLIGHT;
		if (o->has_track_mem && o->track_mem)
			j->flags |= CKPT_TRACK_MEM;
		ret = o->parent_img ? criu_set_parent(j, o->parent_img) : 0;
		return ret ? ret : mounts(j, o, true);
	}
	/* runc puts its criu in the container's groups before RESTORE and
	 * names them in cg_root (cgroup v1): the container's groups are
	 * made under them; without cg_root (v2) it stays in ours */
	j->flags |= CKPT_DETACH | (o->n_cg_root ? 0 : CKPT_NO_CGROUPS);
	ret = mounts(j, o, false);
	if (!ret && o->root && o->root[0])
		ret = criu_add_external(j, "/", o->root);
	return ret ? ret : inherited(j, o);
}

int rpc_job(struct criu_job *j, const CriuOpts *o, pid_t peer, bool dump)
{
	int ret = dirs(j, o, peer);	/* first: the log, to say why */

	return ret ? ret : rpc_map(j, o, peer, dump);
}
