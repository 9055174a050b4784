#pragma once
// How the kernels' enums print in Boost.Test logs (data-driven test names, failed checks).
#include <ostream>

#include "kernels/kv_cache_reference.h"
#include "kernels/numeric.h"

namespace quantplan::kernels {

inline std::ostream& operator<<(std::ostream& os, Half16 t) { return os << (t == Half16::Bf16 ? "bf16" : "fp16"); }
inline std::ostream& operator<<(std::ostream& os, KvCacheType t) { return os << kv_cache_type_name(t); }

}  // namespace quantplan::kernels
