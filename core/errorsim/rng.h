#pragma once
// The error lab's own random numbers: identical on every platform and standard library.
//
// The generator is xoshiro256** seeded through splitmix64 (Blackman and Vigna). Normal deviates
// use Marsaglia's polar method with a logarithm computed here from IEEE-754 basic operations only
// (+, -, *, /, sqrt are correctly rounded on every conforming platform; std::log and
// std::normal_distribution are not pinned down by the standard), so a seed gives the same bits
// everywhere the compiler does not contract a*b+c into one fused operation.
#include <array>
#include <cstdint>

namespace quantplan::errorsim {

// splitmix64: one step of the seeding generator. Returns the next output and advances `state`.
std::uint64_t splitmix64_next(std::uint64_t& state);

// Natural logarithm of a finite x > 0 from basic IEEE operations (relative error below 1e-15).
double det_log(double x);

// e^x for finite |x| <= 700 from basic IEEE operations (relative error below 1e-15).
double det_exp(double x);

// xoshiro256** with uniform and normal draws.
class Rng {
public:
    // Seeds the four state words from `seed` through splitmix64.
    explicit Rng(std::uint64_t seed);

    // The next 64 random bits.
    std::uint64_t next_u64();

    // A uniform double in [0, 1) with 53 random bits.
    double uniform();

    // A standard normal deviate (mean 0, variance 1), Marsaglia's polar method.
    double normal();

    // A uniform integer in [0, n) for n >= 1 (rejection sampling, unbiased).
    std::uint64_t below(std::uint64_t n);

private:
    std::array<std::uint64_t, 4> state_{};
    double spare_normal_ = 0.0;
    bool has_spare_ = false;
};

}  // namespace quantplan::errorsim
