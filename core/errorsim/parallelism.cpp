#include "core/errorsim/parallelism.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace quantplan::errorsim {

int eigen_thread_count() {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

EigenThreadScope::EigenThreadScope(bool serial) {
#ifdef _OPENMP
    if (serial) {
        previous_ = omp_get_max_threads();
        omp_set_num_threads(1);
        active_ = true;
    }
#else
    (void)serial;
#endif
}

EigenThreadScope::~EigenThreadScope() {
#ifdef _OPENMP
    if (active_) omp_set_num_threads(previous_);
#endif
}

}  // namespace quantplan::errorsim
