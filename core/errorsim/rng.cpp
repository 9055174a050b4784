#include "core/errorsim/rng.h"

#include <bit>
#include <cassert>
#include <cmath>

namespace quantplan::errorsim {
namespace {

constexpr double kLn2 = 0.693147180559945309417232121458176568;
// ln 2 split for exact argument reduction (fdlibm's e_exp.c): kLn2Hi has its low 20 bits zero, so
// n * kLn2Hi is exact for |n| < 2^20.
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

std::uint64_t splitmix64_next(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double det_log(double x) {
    assert(x > 0.0 && std::isfinite(x));
    // x = m * 2^e with m in [sqrt(1/2), sqrt(2)), read off the bits (x is a normal double here:
    // the polar method's s >= 2^-106).
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
    int e = static_cast<int>((bits >> 52) & 0x7FF) - 1023;
    double m = std::bit_cast<double>((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);  // [1, 2)
    if (e == -1023) return det_log(x * 0x1p64) - 64 * kLn2;  // subnormal: rescale exactly
    if (m >= 1.41421356237309504880) {
        m *= 0.5;
        e += 1;
    }
    // log(m) = 2 atanh(u), u = (m - 1) / (m + 1), |u| <= 0.1716: the odd series
    // u + u^3/3 + ... + u^23/23 leaves a remainder below 1e-19, evaluated by Horner's rule with
    // the coefficients 1/(2i+1) as compile-time doubles (correctly rounded, hence the same everywhere).
    static constexpr double kInvOdd[] = {1.0 / 1,  1.0 / 3,  1.0 / 5,  1.0 / 7,  1.0 / 9,  1.0 / 11,
                                         1.0 / 13, 1.0 / 15, 1.0 / 17, 1.0 / 19, 1.0 / 21, 1.0 / 23};
    const double u = (m - 1.0) / (m + 1.0);
    const double u2 = u * u;
    double poly = kInvOdd[11];
    for (int i = 10; i >= 0; --i) poly = poly * u2 + kInvOdd[i];
    const double sum = u * poly;
    return 2.0 * sum + e * kLn2;
}

double det_exp(double x) {
    assert(std::isfinite(x) && std::fabs(x) <= 700.0);
    // x = n ln2 + r with |r| <= ln2/2; e^r by Taylor series, then scaled by 2^n exactly.
    const double n = std::nearbyint(x / kLn2);
    const double r = (x - n * kLn2Hi) - n * kLn2Lo;
    // Horner's rule on 1 + r + r^2/2! + ... + r^18/18! (remainder below 1e-22 for |r| <= 0.35).
    double sum = 1.0;
    for (int i = 18; i >= 1; --i) sum = 1.0 + sum * r / i;
    return std::ldexp(sum, static_cast<int>(n));
}

Rng::Rng(std::uint64_t seed) {
    std::uint64_t s = seed;
    for (auto& word : state_) word = splitmix64_next(s);
}

std::uint64_t Rng::next_u64() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
}

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Rng::normal() {
    if (has_spare_) {
        has_spare_ = false;
        return spare_normal_;
    }
    double u = 0.0, v = 0.0, s = 0.0;
    do {
        u = 2.0 * uniform() - 1.0;
        v = 2.0 * uniform() - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * det_log(s) / s);
    spare_normal_ = v * f;
    has_spare_ = true;
    return u * f;
}

std::uint64_t Rng::below(std::uint64_t n) {
    assert(n >= 1);
    // Rejects the top partial block of 2^64 so that every residue is equally likely.
    const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
    std::uint64_t x = next_u64();
    while (x >= limit) x = next_u64();
    return x % n;
}

}  // namespace quantplan::errorsim
