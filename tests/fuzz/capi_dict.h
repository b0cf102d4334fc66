// The strings capi_fuzz picks its arguments from (a string argument byte b
// in [8, 200) selects kCapiDict[b % kCapiDictSize]); make_corpus writes
// seed programs with them.
#ifndef HDRF_TESTS_FUZZ_CAPI_DICT_H_
#define HDRF_TESTS_FUZZ_CAPI_DICT_H_

#include <cstddef>

namespace hdrf::fuzz {

inline const char* const kCapiDict[] = {
    "root", "root/a", "root/b", "root/a/x", "root/a/y", "root/b/z", "root/a/x/deep",
    "j1", "j2", "j3", "alice", "bob", "", "cpu=8", "cpu=10,memory=64Gi",
    "cpu=4,memory=16Gi,nvidia.com/gpu=2", "cpu=1", "memory=1Gi", "cpu=500m,memory=512Mi",
    "nvidia.com/gpu=1", "cpu=1x", "cpu=-1", "cpu=0.5m", "gpu=1", "cpu=1,cpu=2", "cpu",
    "memory=1.5", "pods=3", "cpu=2c", "cpu=9999999999999999999", "cpu=1E", "memory=8Ei",
    "root//a", "/root", "root/", "a", "root/a/../b",
};
inline constexpr size_t kCapiDictSize = sizeof(kCapiDict) / sizeof(kCapiDict[0]);

}  // namespace hdrf::fuzz

#endif  // HDRF_TESTS_FUZZ_CAPI_DICT_H_
