// libFuzzer entry point (clang -fsanitize=fuzzer): the same target as the mutation test.
//   fuzz_checkpoint_libfuzzer -max_total_time=60 -seed=1 [corpus_dir]
#include <cstddef>
#include <cstdint>

#include "checkpoint_fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    quantplan::fuzz::run_one_input(data, size);
    return 0;
}
