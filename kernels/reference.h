#pragma once
// What every host reference shares: an exact matmul in double that also returns the magnitude
// sum the error bounds scale with, and the comparison of a kernel's output with a reference under
// a named tolerance.
#include <cstdint>
#include <string>
#include <vector>

namespace quantplan::kernels {

// Unit roundoff of the formats the error bounds use (u = 2^-(p) for p significand bits incl. the
// implicit one, round to nearest: Higham, Accuracy and Stability of Numerical Algorithms, §2.1).
inline constexpr double kUnitRoundoffFp32 = 5.9604644775390625e-8;  // 2^-24
inline constexpr double kUnitRoundoffFp16 = 4.8828125e-4;           // 2^-11
inline constexpr double kUnitRoundoffBf16 = 3.90625e-3;             // 2^-8

// A matmul output computed in double: value[i] = sum_k x w, magnitude[i] = sum_k |x w|, [M][N].
struct DenseResult {
    std::int64_t m = 0;
    std::int64_t n = 0;
    std::vector<double> value;
    std::vector<double> magnitude;
};

// Y = X W^T in double with X [M][K] and W [N][K] row-major floats.
DenseResult reference_matmul_nt(const std::vector<float>& x, const std::vector<float>& w, std::int64_t m, std::int64_t n, std::int64_t k);

// An accepted error band: |actual - expected| <= relative |expected| + magnitude_relative
// sum|x w| + absolute. `source` says where the numbers come from.
struct Tolerance {
    double relative = 0;
    double magnitude_relative = 0;
    double absolute = 0;
    std::string source;
};

// The bound for a length-K fp32 dot product whose output is rounded to a 16-bit format with unit
// roundoff `output_roundoff`, whose inputs were rounded with `input_roundoff` (0 when exact):
// relative 2 u_out (one rounding, one ulp of slack), magnitude K u_fp32 + 2 u_in (Higham's
// gamma_K bound for recursive summation, Theorem 3.1, plus the input rounding of each product).
Tolerance dot_product_tolerance(std::int64_t k, double output_roundoff, double input_roundoff, std::string source);

// The result of comparing a kernel's output with its reference.
struct Comparison {
    std::int64_t count = 0;             // elements compared
    std::int64_t failures = 0;          // elements outside the band
    double max_abs_error = 0;           // largest |actual - expected|
    double worst_ratio = 0;             // largest |actual - expected| / bound (<= 1 passes)
    std::int64_t worst_index = -1;      // element of worst_ratio
    double worst_actual = 0;
    double worst_expected = 0;
    double worst_bound = 0;

    bool passed() const { return count > 0 && failures == 0; }
    // One line: "N of M outside; worst at i: expected E, actual A, bound B".
    std::string describe() const;
};

// Compares `actual` (decoded to float) with `expected` elementwise; `magnitude` may be empty
// (then magnitude_relative is unused). A NaN in `actual` always fails.
Comparison compare_with_tolerance(const std::vector<float>& actual, const std::vector<double>& expected,
                                  const std::vector<double>& magnitude, const Tolerance& tolerance);

// Compares integer or bit patterns exactly: the number of differing elements and the first one.
template <typename T>
Comparison compare_exact(const std::vector<T>& actual, const std::vector<T>& expected) {
    Comparison c;
    c.count = static_cast<std::int64_t>(expected.size());
    if (actual.size() != expected.size()) {
        c.failures = c.count > 0 ? c.count : 1;
        return c;
    }
    for (std::size_t i = 0; i < expected.size(); ++i) {
        if (actual[i] == expected[i]) continue;
        if (c.failures++ == 0) {
            c.worst_index = static_cast<std::int64_t>(i);
            c.worst_actual = static_cast<double>(actual[i]);
            c.worst_expected = static_cast<double>(expected[i]);
            c.worst_ratio = 2;
        }
    }
    return c;
}

// Deterministic pseudo-random numbers for test and validation data (SplitMix64), so a failure
// reproduces from its seed on any machine.
class Random {
public:
    explicit Random(std::uint64_t seed) : state_(seed) {}
    // Next 64 random bits.
    std::uint64_t next();
    // Uniform in [lo, hi).
    float uniform(float lo, float hi);
    // Uniform integer in [0, bound). Precondition: bound > 0.
    std::uint32_t below(std::uint32_t bound);

private:
    std::uint64_t state_;
};

}  // namespace quantplan::kernels
