# dump.sh - which of a process's pages a checkpoint saves: of a private
# file mapping, only the pages the process wrote, not the file's pages it
# read (a region of PAGEMAP_SCAN taken whole or not at all:
# src/kinds/mm_dump.c region_runs()).
t dump_private_file_pages

# tests/progs/mem_file's private writable mapping of its file A: pages 2,
# 5, 11 and 16 written, page 7 only read (the kernel maps the file's
# pages around it too).  The image holds those four.
test_dump_private_file_pages() {
	local d=$WORK/dump-file pid start pages
	mkdir -p $d
	TP_TMPDIR=$d "$PROGS/mem_file" $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY || { kill -9 $pid; return 1; }
	ckpt checkpoint -o $d/img $pid || { kill -9 $pid; return 1; }
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out || { cat $d/out; return 1; }
	start=$(ckpt info $d/img | awk '/^VMA/ && / prot=rw-p / && /tp-mem_file-a-/ {
		sub("start=", "", $4); print $4; exit }')
	[ -n "$start" ] || { note "no VMA of the private mapping"; return 1; }
	pages=$(ckpt info $d/img | awk -v v="vma=$start" '/^PAGES/ && $0 ~ v" " {
		for (i = 1; i <= NF; i++) if ($i ~ /^pages=/) print $i }')
	note "private mapping at $start: $pages"
	[ "$pages" = "pages=4" ]
}
