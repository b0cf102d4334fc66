/* An outside C program, built by tests/install/install_test.sh against an
   installed hdrf with only `pkg-config --cflags --libs hdrf_c`. */
#include <hdrf/c.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  char* err = NULL;
  hdrf_engine_t* eng = NULL;
  hdrf_job_ref_t job;
  int major = -1;
  const char* v = hdrf_version(&major, NULL, NULL);
  int64_t steps = 0;
  char digest[HDRF_DIGEST_SIZE];
  if (strcmp(v, HDRF_VERSION_STRING) != 0 || major != HDRF_VERSION_MAJOR) {
    fprintf(stderr, "version: library %s, headers %s\n", v, HDRF_VERSION_STRING);
    return 1;
  }
  if (hdrf_engine_create("cpu=4", NULL, 0, NULL, &eng, &err) != HDRF_OK ||
      hdrf_job_submit(eng, "j", NULL, NULL, 8, "cpu=1", &job, &err) != HDRF_OK ||
      hdrf_fill(eng, &steps, &err) != HDRF_OK || hdrf_job_release_ref(eng, job, 1, &err) != HDRF_OK ||
      hdrf_digest(eng, digest, sizeof digest, &err) != HDRF_OK) {
    fprintf(stderr, "hdrf: %s\n", err ? err : "?");
    return 1;
  }
  printf("c: hdrf %s, %lld steps, digest %s\n", v, (long long)steps, digest);
  hdrf_engine_destroy(eng, &err);
  hdrf_free(err);
  return steps == 4 ? 0 : 1;
}
