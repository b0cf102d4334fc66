// jemalloc's settings for the hdrf executable (built only when jemalloc is
// linked, tools/meson.build; docs/tools.md "Memory"). jemalloc reads the
// global `malloc_conf` at its first allocation; MALLOC_CONF in the
// environment is read after it, so each of its options overrides this one.
// The library (libhdrf) never links jemalloc: a host that embeds it chooses
// its allocator and settings itself.
//
//   narenas:1           one arena for all threads instead of four per core:
//                       the durable engine's threads (the engine's, the
//                       journal's writer and checkpoint threads, RocksDB's
//                       flush and compaction threads) each freed memory into
//                       an arena of its own that the others could not reuse.
//                       Small allocations still go through each thread's
//                       cache; the engine allocates little outside its
//                       exclusive sections.
//   dirty_decay_ms:1000 freed pages go back to the system after about 1 s
//                       instead of 10 s.
//
// Together they took 25-50 MiB off the peak of a durable 10^6-job replay
// and about 10 MiB off an in-memory one (bench/README.md "The durable
// engine's memory outside the image").
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "narenas:1,dirty_decay_ms:1000";
}
