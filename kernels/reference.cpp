#include "kernels/reference.h"

#include <cmath>
#include <cstdio>

#include "core/base/error.h"

namespace quantplan::kernels {

DenseResult reference_matmul_nt(const std::vector<float>& x, const std::vector<float>& w, std::int64_t m, std::int64_t n, std::int64_t k) {
    if (m < 0 || n < 0 || k < 0) throw Error("reference_matmul_nt", "negative extent");
    if (x.size() != static_cast<std::size_t>(m * k)) throw Error("reference_matmul_nt: x", "size does not match M x K");
    if (w.size() != static_cast<std::size_t>(n * k)) throw Error("reference_matmul_nt: w", "size does not match N x K");
    DenseResult r;
    r.m = m;
    r.n = n;
    r.value.assign(static_cast<std::size_t>(m * n), 0.0);
    r.magnitude.assign(static_cast<std::size_t>(m * n), 0.0);
    for (std::int64_t i = 0; i < m; ++i) {
        const float* xr = x.data() + i * k;
        for (std::int64_t j = 0; j < n; ++j) {
            const float* wr = w.data() + j * k;
            double sum = 0, mag = 0;
            for (std::int64_t t = 0; t < k; ++t) {
                const double p = static_cast<double>(xr[t]) * static_cast<double>(wr[t]);
                sum += p;
                mag += std::fabs(p);
            }
            r.value[static_cast<std::size_t>(i * n + j)] = sum;
            r.magnitude[static_cast<std::size_t>(i * n + j)] = mag;
        }
    }
    return r;
}

Tolerance dot_product_tolerance(std::int64_t k, double output_roundoff, double input_roundoff, std::string source) {
    Tolerance t;
    t.relative = 2.0 * output_roundoff;
    t.magnitude_relative = static_cast<double>(k) * kUnitRoundoffFp32 + 2.0 * input_roundoff;
    t.absolute = 0;
    t.source = std::move(source);
    return t;
}

std::string Comparison::describe() const {
    char buf[256];
    if (count == 0) return "nothing compared";
    if (failures == 0) {
        std::snprintf(buf, sizeof buf, "%lld compared, all within tolerance (worst %.3g of the bound, max abs error %.3g)",
                      static_cast<long long>(count), worst_ratio, max_abs_error);
    } else {
        std::snprintf(buf, sizeof buf, "%lld of %lld outside; worst at %lld: expected %.9g, actual %.9g, bound %.3g",
                      static_cast<long long>(failures), static_cast<long long>(count), static_cast<long long>(worst_index),
                      worst_expected, worst_actual, worst_bound);
    }
    return buf;
}

Comparison compare_with_tolerance(const std::vector<float>& actual, const std::vector<double>& expected,
                                  const std::vector<double>& magnitude, const Tolerance& tol) {
    Comparison c;
    c.count = static_cast<std::int64_t>(expected.size());
    if (actual.size() != expected.size() || (!magnitude.empty() && magnitude.size() != expected.size())) {
        c.failures = c.count > 0 ? c.count : 1;
        return c;
    }
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const double a = actual[i];
        const double e = expected[i];
        const double bound = tol.relative * std::fabs(e) + (magnitude.empty() ? 0.0 : tol.magnitude_relative * magnitude[i]) + tol.absolute;
        const double err = std::fabs(a - e);
        const bool ok = !std::isnan(a) && err <= bound;
        const double ratio = std::isnan(a) ? INFINITY : (bound > 0 ? err / bound : (err > 0 ? INFINITY : 0.0));
        if (!std::isnan(a) && err > c.max_abs_error) c.max_abs_error = err;
        if (!ok) ++c.failures;
        if (c.worst_index < 0 || ratio > c.worst_ratio) {
            c.worst_ratio = ratio;
            c.worst_index = static_cast<std::int64_t>(i);
            c.worst_actual = a;
            c.worst_expected = e;
            c.worst_bound = bound;
        }
    }
    return c;
}

std::uint64_t Random::next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float Random::uniform(float lo, float hi) {
    const double unit = static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
    return static_cast<float>(lo + (hi - lo) * unit);
}

std::uint32_t Random::below(std::uint32_t bound) { return static_cast<std::uint32_t>(next() % bound); }

}  // namespace quantplan::kernels
