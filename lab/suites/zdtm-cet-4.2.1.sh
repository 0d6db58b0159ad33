# SPDX-License-Identifier: GPL-2.0
# The ZDTM CET tests dumped and restored by CRIU 4.2.1, the best upstream.
# Its criu comes as an overlay (lab/overlays/upstream.sh): make compare only.
if [ -x /lab/criu-4.2.1/criu ]; then
	zdtm_cet_run --flavour criu-4.2.1 --criu /lab/criu-4.2.1/criu --dir /lab/zdtm/cet
else
	echo "zdtm-cet-4.2.1: /lab/criu-4.2.1/criu is not in this guest (no overlay)"
fi
