/* Instructions of the C fast path (bench/README.md "One op, one dispatcher"):
   N allocate/release pairs on one job ref (./capi_calls N 0), or the same
   2N ops as hdrf_apply calls of 1,000 (./capi_calls N 1); run under
   valgrind --tool=callgrind, minus a run with N = 0. Built by hand:
   gcc -O2 -o capi_calls bench/capi_calls.c -Iapi -Ibuild/release/api \
     -Lbuild/release/api/capi -l:libhdrf_c.so.0.1 */
#include <stdio.h>
#include <stdlib.h>
#include <hdrf/c.h>
int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20000;
  int batch = argc > 2 ? atoi(argv[2]) : 0;
  hdrf_queue_spec_t q; hdrf_queue_spec_init(&q); q.path = "root/a/leaf";
  hdrf_engine_t* e = NULL; char* err = NULL;
  if (hdrf_engine_create("cpu=1000", &q, 1, NULL, &e, &err) != HDRF_OK) { puts(err); return 1; }
  hdrf_job_ref_t j;
  if (hdrf_job_submit(e, "j", "root/a/leaf", NULL, 100, "cpu=1", &j, &err) != HDRF_OK) { puts(err); return 1; }
  if (!batch) {
    for (int i = 0; i < n; ++i) {
      if (hdrf_job_allocate_ref(e, j, 1, NULL) != HDRF_OK) return 2;
      if (hdrf_job_release_ref(e, j, 1, NULL) != HDRF_OK) return 3;
    }
  } else {
    hdrf_op_t ops[1000];
    for (int i = 0; i < 1000; ++i) { ops[i].job = j; ops[i].n = 1; ops[i].type = i % 2 ? HDRF_OP_RELEASE : HDRF_OP_ALLOCATE; }
    for (int i = 0; i < n / 500; ++i)
      if (hdrf_apply(e, ops, 1000, sizeof ops[0], NULL, NULL, NULL) != HDRF_OK) return 4;
  }
  hdrf_engine_destroy(e, NULL);
  return 0;
}
