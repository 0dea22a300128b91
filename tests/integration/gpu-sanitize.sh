#!/bin/sh
# gpu-sanitize.sh: the GPU tests under compute-sanitizer.  The in-process
# ones (check_gpu_device, check_gpu_formats, check_gpu_blas) run under it
# whole; in the service tests (check_gpu_service, check_gpu_vectors.sh)
# the daemon starts its device worker through a wrapper that runs it under
# compute-sanitizer (spmvd.conf "worker", given to every daemon of the
# tests through SPMV_ITEST_EXTRA_CONF), with no device timeout, since a
# sanitized kernel runs many times slower.  Fails when a test fails or a
# sanitizer report counts an error.  Run from the build directory:
#
#   tests/integration/gpu-sanitize.sh [TOOL ...]     (memcheck racecheck)
#
# SPMV_SANITIZE_TESTS lists the tests (default: all five), and
# COMPUTE_SANITIZER the program (default: compute-sanitizer on PATH, else
# under /usr/local/cuda).  SPMV_SANITIZE_WHOLE=1 runs the service tests
# under it whole instead (--target-processes all: the test, the daemon and
# the worker), should the wrapper not suit the sanitizer.  racecheck fails
# on a hazard in spmvd's kernels; those it reports inside cuSPARSE's or
# cuBLAS's own kernels are listed apart.
# check_gpu_faults is never among them: its faults are errors on purpose.
top_build=${SPMV_TOP_BUILDDIR:-$(pwd)}
top_src=${SPMV_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
san=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
tests=${SPMV_SANITIZE_TESTS:-"check_gpu_device check_gpu_formats check_gpu_blas check_gpu_service check_gpu_vectors.sh"}
tools=${*:-memcheck racecheck}
[ -x "$san" ] || { echo "gpu-sanitize: no compute-sanitizer ($san)"; exit 77; }
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "gpu-sanitize: no GPU; skipped"
  exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpu-sanitize.XXXXXX")
SPMV_TOP_BUILDDIR=$top_build
SPMV_TOP_SRCDIR=$top_src
SPMV_MATRICES=${SPMV_MATRICES:-$top_src/tests/data/matrices}
# check's per-test timeouts, stretched for sanitized kernels.
CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-20}
# A calibration bounded in seconds cannot fit under the sanitizer's slowed
# kernels (check_gpu_service's case tagged calibrate; its kernels are the
# others').
CK_EXCLUDE_TAGS=calibrate
export SPMV_TOP_BUILDDIR SPMV_TOP_SRCDIR SPMV_MATRICES CK_TIMEOUT_MULTIPLIER CK_EXCLUDE_TAGS
status=0
for tool in $tools; do
  dir=$tmp/$tool
  mkdir -p "$dir"
  extra=
  [ "$tool" = memcheck ] && extra="--leak-check full"
  cat >"$dir/worker" <<EOF
#!/bin/sh
exec "$san" --tool $tool $extra --log-file "$dir/worker.%p.log" "$top_build/daemon/spmvd-worker" "\$@"
EOF
  chmod +x "$dir/worker"
  for t in $tests; do
    echo "== $t under $tool"
    case $t in
      check_gpu_device|check_gpu_formats|check_gpu_blas)
        CK_FORK=no "$san" --tool "$tool" $extra --log-file "$dir/$t.log" \
          "$top_build/tests/$t" || status=1 ;;
      *)
        prog=$top_build/tests/integration/$t
        case $t in *.sh) prog="sh $top_src/tests/integration/$t" ;; esac
        if [ -n "$SPMV_SANITIZE_WHOLE" ]; then
          SPMV_ITEST_EXTRA_CONF="device_timeout_s = 0" "$san" --tool "$tool" \
            $extra --target-processes all --log-file "$dir/$t.%p.log" $prog ||
            status=1
        else
          SPMV_ITEST_EXTRA_CONF="worker = $dir/worker
device_timeout_s = 0" $prog || status=1
        fi ;;
    esac
  done
  logs=$(ls "$dir"/*.log 2>/dev/null)
  if [ -z "$logs" ]; then
    echo "gpu-sanitize: $tool wrote no report"
    status=1
    continue
  fi
  summaries=$(cat $logs | grep -c 'SUMMARY')
  echo "$tool: $summaries reports in $dir"
  if [ "$tool" = racecheck ]; then
    # Each hazard starts with "Error|Warning: Race reported between ... at
    # KERNEL+OFFSET".  Those inside cuSPARSE's or cuBLAS's own kernels are
    # counted apart: spmvd cannot change them, but a reader must see them.
    races=$(grep -h -E '(Error|Warning): Race reported' $logs)
    vendor=$(printf '%s\n' "$races" | grep -c -E ' at (void )?(cusparse|cublas)[A-Za-z_]*::' || true)
    own=$(printf '%s\n' "$races" | grep -v -E ' at (void )?(cusparse|cublas)[A-Za-z_]*::' | grep -c 'Race reported' || true)
    echo "racecheck: $own hazards in spmvd's kernels, $vendor in cuSPARSE's or cuBLAS's own"
    [ "$vendor" -eq 0 ] || printf '%s\n' "$races" | grep -E ' at (void )?(cusparse|cublas)' |
      sed -e 's/.* at \(void \)\{0,1\}\([A-Za-z0-9_:]*\).*/  vendor: \2/' | sort | uniq -c
    if [ "$own" -gt 0 ]; then
      printf '%s\n' "$races" | grep -v -E ' at (void )?(cusparse|cublas)[A-Za-z_]*::' | head -20
      status=1
    fi
  else
    # memcheck: "ERROR SUMMARY: N errors".
    bad=$(grep -h -E 'ERROR SUMMARY: [1-9]' $logs)
    if [ -n "$bad" ]; then
      echo "$bad"
      grep -l -E 'ERROR SUMMARY: [1-9]' $logs
      status=1
    fi
  fi
done
echo "gpu-sanitize: $( [ $status -eq 0 ] && echo PASS || echo FAIL ) (reports kept in $tmp)"
exit $status
