# SPDX-License-Identifier: GPL-2.0
# Live migration with shadow stacks: the ZDTM CET tests through iterative
# pre-dumps with memory tracking (churn's shadow stacks change all the time
# in between), a dump through the page server on the loopback, a restore
# with lazy pages (shadow stacks eagerly), locally and over TCP, and all
# three in one flow; stock 4.1.1 beside it.  zdtm.py's --pre, --page-server,
# --lazy-pages and --remote-lazy-pages.
all=plain,churn,threads,fibers,fiber_thread,deep
migrate() {
	local tests=$1 flavour=$2 criu=$3
	shift 3
	zdtm_cet_run --dir /lab/zdtm/cet --only "$tests" --flavour "$flavour" --criu "$criu" "$@"
}
migrate $all criu-cet.predump /lab/criu-cet/criu --predump 3
migrate $all criu-cet.page-server /lab/criu-cet/criu --predump 1 --page-server
migrate $all criu-cet.lazy /lab/criu-cet/criu --lazy-pages
migrate $all criu-cet.migrate /lab/criu-cet/criu --predump 2 --page-server --lazy-pages
# post-copy: the lazy pages come over TCP from a page server on the images
migrate $all criu-cet.remote-lazy /lab/criu-cet/criu --remote-lazy-pages
migrate $all criu-cet.postcopy /lab/criu-cet/criu --predump 2 --page-server --remote-lazy-pages
migrate plain,churn stock-4.1.1.migrate /lab/criu-stock/criu --predump 2 --page-server --lazy-pages
