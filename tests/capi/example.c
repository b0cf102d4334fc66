/* Embedding hdrf from C: the docs/spec.md §4 worked example 1.

   10 CPU, 10 GPU. root/sci (weight 50) runs a job of <1 CPU, 1 GPU> x 10;
   root/eng (weight 50) has dev (weight 50) with a job of <1 CPU> x 10 and
   prod (weight 50) with a job of <1 GPU> x 10. Filling gives 5 tasks to
   each job. The program also walks two error paths (an unknown job and a
   quantity with a bad unit) and exits 0 only if everything is as expected.

   Built as plain C99 against libhdrf_c.so and run by the tests
   (tests/capi/meson.build, test `capi_example`). */
#include <stdio.h>
#include <string.h>

#include "hdrf/c.h"

static int failures = 0;

#define EXPECT(cond)                                                   \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                      \
    }                                                                  \
  } while (0)

/* Prints the message of a failed call and counts it as a failure. */
static int ok(hdrf_code code, char** err, const char* what) {
  if (code == HDRF_OK) return 1;
  fprintf(stderr, "%s: %s: %s\n", what, hdrf_code_name(code), *err ? *err : "(no message)");
  ++failures;
  return 0;
}

int main(void) {
  char* err = NULL; /* reused: each failure frees the previous message */
  hdrf_engine_t* eng = NULL;
  hdrf_queue_spec_t queues[4];
  const char* paths[4] = {"root/sci", "root/eng", "root/eng/dev", "root/eng/prod"};
  const char* jobs[3] = {"sci", "dev", "prod"};
  char digest[HDRF_DIGEST_SIZE];
  char digest_after[HDRF_DIGEST_SIZE];
  int64_t steps = 0;
  int i;

  for (i = 0; i < 4; ++i) {
    hdrf_queue_spec_init(&queues[i]);
    queues[i].path = paths[i];
    queues[i].weight = 50;
  }
  if (!ok(hdrf_engine_create("cpu=10,nvidia.com/gpu=10", queues, 4, NULL, &eng, &err), &err,
          "create"))
    return 1;

  ok(hdrf_job_submit(eng, "sci", "root/sci", "alice", 10, "cpu=1,nvidia.com/gpu=1", NULL, &err), &err,
     "submit sci");
  ok(hdrf_job_submit(eng, "dev", "root/eng/dev", "bob", 10, "cpu=1", NULL, &err), &err, "submit dev");
  ok(hdrf_job_submit(eng, "prod", "root/eng/prod", "carol", 10, "nvidia.com/gpu=1", NULL, &err), &err,
     "submit prod");

  ok(hdrf_fill(eng, &steps, &err), &err, "fill");
  printf("fill: %lld steps\n", (long long)steps);
  EXPECT(steps == 15);

  for (i = 0; i < 3; ++i) {
    hdrf_job_info_t info;
    hdrf_job_info_init(&info);
    if (ok(hdrf_job_get(eng, jobs[i], &info, &err), &err, "job get")) {
      printf("%-5s allocated %lld of %lld tasks, state %s, share %.3f\n", jobs[i],
             (long long)info.allocated, (long long)info.tasks, hdrf_job_state_name(info.state),
             info.share);
      EXPECT(info.allocated == 5);
      EXPECT(info.state == HDRF_JOB_RUNNING);
    }
  }

  /* The cluster is full: no further step. */
  {
    int stepped = -1;
    char* name = NULL;
    ok(hdrf_step(eng, &stepped, &name, &err), &err, "step");
    EXPECT(stepped == 0);
    EXPECT(name == NULL);
    hdrf_free(name);
  }

  ok(hdrf_digest(eng, digest, sizeof digest, &err), &err, "digest");
  printf("digest %s\n", digest);

  /* Error path 1: an unknown job. */
  {
    hdrf_code c = hdrf_job_allocate(eng, "no-such-job", 1, &err);
    printf("allocate no-such-job -> %s: %s\n", hdrf_code_name(c), err ? err : "");
    EXPECT(c == HDRF_NOT_FOUND);
    EXPECT(err != NULL && strstr(err, "no-such-job") != NULL);
  }
  /* Error path 2: a quantity in a unit that does not exist. */
  {
    hdrf_code c = hdrf_job_submit(eng, "bad", "root/sci", NULL, 1, "cpu=1x", NULL, &err);
    printf("submit task cpu=1x -> %s: %s\n", hdrf_code_name(c), err ? err : "");
    EXPECT(c == HDRF_INVALID_ARGUMENT);
    EXPECT(err != NULL && strstr(err, "1x") != NULL);
  }
  /* Error path 3: a NULL handle. */
  EXPECT(hdrf_fill(NULL, &steps, &err) == HDRF_INVALID_ARGUMENT);

  /* Refused calls changed nothing. */
  ok(hdrf_digest(eng, digest_after, sizeof digest_after, &err), &err, "digest");
  EXPECT(strcmp(digest, digest_after) == 0);

  /* Metrics in Prometheus text format: print the lines of root/eng/dev. */
  {
    char* text = NULL;
    size_t len = 0;
    if (ok(hdrf_metrics(eng, &text, &len, &err), &err, "metrics")) {
      const char* line = text;
      EXPECT(strstr(text, "hdrf_events_total 18\n") != NULL); /* 3 submits + 15 steps */
      while (line && *line) {
        const char* end = strchr(line, '\n');
        int n = end ? (int)(end - line) : (int)strlen(line);
        if (strstr(line, "queue=\"root/eng/dev\"") && strstr(line, "queue=\"root/eng/dev\"") < line + n)
          printf("  %.*s\n", n, line);
        line = end ? end + 1 : NULL;
      }
    }
    hdrf_free(text);
  }

  ok(hdrf_engine_destroy(eng, &err), &err, "destroy");
  /* A destroyed handle is recognised, not used. */
  EXPECT(hdrf_engine_destroy(eng, &err) == HDRF_INVALID_ARGUMENT);
  hdrf_free(err);

  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
