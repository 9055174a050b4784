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

// The q-quantile (0..1) of `v`, linear between the two nearest ranks; 0 for none.
inline double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const double pos = q * static_cast<double>(v.size() - 1);
    const auto i = static_cast<std::size_t>(pos);
    const std::size_t j = std::min(i + 1, v.size() - 1);
    return v[i] + (pos - static_cast<double>(i)) * (v[j] - v[i]);
}

}  // namespace quantplan
