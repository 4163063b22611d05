#!/usr/bin/env bash
# layers.sh - the layers call only downward (docs/design.md, "Layers").
# usage: tests/layers.sh [--edges] [OBJDIR]    (OBJDIR: build/obj)
#
# From the release objects, one per source file (nm --defined-only: what
# each defines; nm -u: what it uses), every call from one file to a
# function another file defines.  Files are taken in groups, a kind's own
# files together: within a folder, the same name up to its first '_'
# (kinds/mm.c, mm_dump.c, mm_load.c, mm_restore.c; files/unix.c,
# unix_build.c, unix_graph.c), and by name the files of a kind split
# otherwise (JOIN below: pipe, fifo and their buffer; inet, its TCP
# connections and datagrams).  A group may call its own files as it
# likes.  It fails, listing each, for
#   - a circle: groups that call each other, directly or round a longer
#     loop (a strongly connected component of more than one group);
#   - a call up: a file that is not an orchestrator (ORCHESTRATORS, with
#     their parts) into one that is.
# A reference to a kind's table of hooks (global data named kind_* or
# file_*: the only global data there is, but for kinds.c's table of
# them) is no call: it is how a registry plugs a kind in, to call it
# downward through its pointers.
# --edges: every call between groups, and nothing checked.
set -u
cd "$(dirname "$0")/.." || exit 2
EDGES=
[ "${1:-}" = --edges ] && { EDGES=1; shift; }
OBJ=${1:-build/obj}

# The tops: the command line and the demo; the calls of ckpt.h
# (checkpoint, restart, info), and pidns.c, which runs a restart in a new
# pid namespace; with their own parts, tree.c (checkpoint's) and
# sessions.c (restart's).  Nothing below may call them.
ORCHESTRATORS="ckpt demo checkpoint tree restart sessions pidns info criu/cli criu/swrk criu/dump criu/restore"

# Files of one kind whose names the rule does not bring together.
JOIN="files/fifo=files/pipe files/pipebuf=files/pipe
      files/tcp_repair=files/inet files/tcp_fin=files/inet files/dgram=files/inet"

# Calls between groups let through for now, each "FROM -> TO" with why.
# Every entry must still be met (a stale one fails): empty it as the
# calls go.
ALLOW=(
)

# "def FILE TYPE SYMBOL" and "use FILE SYMBOL", for every source file
symbols() {
	local src f o
	for src in $(find src -name '*.c' | sort); do
		f=${src#src/}
		f=${f%.c}
		o=$OBJ/$f.o
		# another architecture's port (src/arch/ARCH/) is not built here
		case $f in arch/*/*) [ -d "$OBJ/${f%/*}" ] || continue ;; esac
		if [ ! -f "$o" ] || [ "$o" -ot "$src" ]; then
			echo "missing $f"
			return
		fi
		echo "file $f"
		nm --defined-only "$o" 2> /dev/null |
			awk -v f="$f" 'NF == 3 && $2 ~ /^[A-Z]$/ { print "def", f, $2, $3 }'
		nm -u "$o" | awk -v f="$f" '{ print "use", f, $NF }'
	done
}

symbols | awk -v orch="$ORCHESTRATORS" -v joins="$JOIN" -v edges="$EDGES" \
	-v allows="$(printf '%s\n' "${ALLOW[@]}")" '
function group(f,   d, b) {
	if (f in join)
		return join[f]
	match(f, /[^\/]*$/)
	d = substr(f, 1, RSTART - 1)
	b = substr(f, RSTART)
	sub(/_.*/, "", b)
	return d b
}

function node(g) {
	if (!(g in isnode)) {
		isnode[g] = 1
		nodes[++nn] = g
	}
}

# Tarjan: comp[g], the strongly connected component of each group
function strong(v,   i, w, size) {
	idx[v] = low[v] = ++counter
	stack[++sp] = v
	onstack[v] = 1
	for (i = 1; i <= adjn[v]; i++) {
		w = adj[v, i]
		if (!(w in idx)) {
			strong(w)
			if (low[w] < low[v])
				low[v] = low[w]
		} else if (onstack[w] && idx[w] < low[v]) {
			low[v] = idx[w]
		}
	}
	if (low[v] != idx[v])
		return
	ncomp++
	do {
		w = stack[sp--]
		onstack[w] = 0
		comp[w] = ncomp
		size++
	} while (w != v)
	csize[ncomp] = size
}

function sorted(s,   a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	s = ""
	for (i = 1; i <= n; i++)
		s = s (i > 1 ? " " : "") a[i]
	return s
}

BEGIN {
	n = split(orch, a, " ")
	for (i = 1; i <= n; i++)
		isorch[a[i]] = 1
	n = split(joins, a, " ")
	for (i = 1; i <= n; i++) {
		split(a[i], p, "=")
		join[p[1]] = p[2]
	}
	n = split(allows, a, "\n")
	for (i = 1; i <= n; i++)
		if (a[i] != "")
			allow[a[i]] = 1
}
$1 == "missing" {
	print "layers: src/" $2 ".c has no object as new as it: run make first"
	bad = 1
}
$1 == "file" { nfiles++; node(group($2)) }
$1 == "def" { def[$4] = $2; dtype[$4] = $3 }
$1 == "use" { nu++; ufile[nu] = $2; usym[nu] = $3 }
END {
	if (bad)
		exit 1
	for (k = 1; k <= nu; k++) {
		s = usym[k]
		f = ufile[k]
		if (!(s in def) || def[s] == f)
			continue
		if (dtype[s] !~ /^[TW]$/ && s ~ /^(kind|file)_/)
			continue	# a kind registered
		g = group(f)
		h = group(def[s])
		if (g == h)
			continue
		e = g " -> " h
		if (!(e in esyms)) {
			elist[++ne] = e
			efrom[e] = g
			eto[e] = h
			esyms[e] = ""
		}
		if (!((e, s) in seen))
			esyms[e] = esyms[e] " " s
		seen[e, s] = 1
	}
	if (edges) {
		for (i = 1; i <= ne; i++)
			print elist[i] ":" esyms[elist[i]]
		exit 0
	}
	for (i = 1; i <= ne; i++) {
		e = elist[i]
		if (e in allow) {
			print "allowed: " e ":" esyms[e]
			used[e] = 1
			continue
		}
		g = efrom[e]
		adj[g, ++adjn[g]] = eto[e]
		if (!(g in isorch) && (eto[e] in isorch)) {
			print "up: " e ":" esyms[e]
			bad = 1
		}
	}
	for (e in allow)
		if (!(e in used)) {
			print "layers: allow-list entry \"" e "\" meets no call: remove it"
			bad = 1
		}
	for (i = 1; i <= nn; i++)
		if (!(nodes[i] in idx))
			strong(nodes[i])
	for (c = 1; c <= ncomp; c++) {
		if (csize[c] < 2)
			continue
		members = ""
		for (i = 1; i <= nn; i++)
			if (comp[nodes[i]] == c)
				members = members " " nodes[i]
		print "circle:" " " sorted(members)
		for (i = 1; i <= ne; i++) {
			e = elist[i]
			if (!(e in allow) && comp[efrom[e]] == c && comp[eto[e]] == c)
				print "    " e ":" esyms[e]
		}
		bad = 1
	}
	printf "layers: %d files in %d groups, %d pairs of groups calling: %s\n",
		nfiles, nn, ne, bad ? "FAILED" : "ok"
	exit bad
}'
