#pragma once
// How many threads Eigen's matrix products may use inside one lab call (internal to core).
//
// With OpenMP, Eigen splits large products across the machine's cores (GPTQ on 4096 x 4096). On a
// seed-sized layer waking a thread team costs more than the product, and on a busy machine far
// more, so small calls run on the calling thread alone. The setting is OpenMP's per-thread
// nthreads value: it affects only the calling thread and is restored on scope exit.
#include <cstdint>

namespace quantplan::errorsim {

// Multiply-adds below which a call runs serially (a 32 x 256 layer with 1,024 tokens is ~10^7).
inline constexpr double kParallelThresholdMacs = 2e8;

// The threads Eigen's large products use on the calling thread (1 without OpenMP).
int eigen_thread_count();

// Restricts Eigen to one thread for the lifetime of the object when `serial` is true.
class EigenThreadScope {
public:
    explicit EigenThreadScope(bool serial);
    ~EigenThreadScope();
    EigenThreadScope(const EigenThreadScope&) = delete;
    EigenThreadScope& operator=(const EigenThreadScope&) = delete;

private:
    int previous_ = 0;
    bool active_ = false;
};

}  // namespace quantplan::errorsim
