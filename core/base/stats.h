#pragma once
// Small statistics shared by the fits and the error tables.
#include <algorithm>
#include <cstddef>
#include <vector>

namespace quantplan {

// The median of `v` (the mean of the two middle values for an even count); 0 for none.
inline double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

}  // namespace quantplan
