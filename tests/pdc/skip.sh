#!/bin/sh
# A `pdc` test that cannot run here: say why and report SKIPPED to ctest
# (SKIP_RETURN_CODE 77). usage: skip.sh TEST REASON
echo "SKIPPED: $1: $2"
exit 77
