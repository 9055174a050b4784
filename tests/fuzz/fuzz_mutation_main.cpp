// A seeded random-mutation fuzzer for the checkpoint parsers, bounded in time, for CI (ctest
// fuzz_checkpoint, label core). It mutates the seed corpus (bit flips, interesting bytes and
// lengths, JSON-aware numbers and brackets, splices) with a fixed seed, runs every input through
// run_one_input(), and fails when anything but quantplan::Error escapes or when a single
// allocation grows beyond kMaxAllocationBytes (an allocation sized by a length field of the file).
//
//   fuzz_checkpoint_parsers [--seconds S] [--iterations N] [--seed X]
//
// The same target runs under libFuzzer when built with clang (fuzz_checkpoint_libfuzzer).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <random>
#include <string>

#include "checkpoint_fuzz_target.h"

namespace {

// Largest single allocation an input of at most kMaxInputBytes may cause. The parsers allocate in
// proportion to the input they read (a few times its size as JSON values), never to a length the
// input claims; 64 MiB is far above the first and far below a claimed 100 MB header.
constexpr std::size_t kMaxAllocationBytes = 64u << 20;
constexpr std::size_t kMaxInputBytes = 64u << 10;

std::size_t g_largest_allocation = 0;

}  // namespace

void* operator new(std::size_t n) {
    if (n > g_largest_allocation) g_largest_allocation = n;
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {

using Rng = std::mt19937_64;

std::size_t pick(Rng& rng, std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); }

void put_u64(std::string& s, std::uint64_t v) {
    if (s.size() < 8) s.resize(8, '\0');
    for (int i = 0; i < 8; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

std::uint64_t get_u64(const std::string& s) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0 && s.size() >= 8; --i) v = (v << 8) | static_cast<unsigned char>(s[static_cast<std::size_t>(i)]);
    return v;
}

// One random edit of `s`.
void mutate(std::string& s, const std::vector<std::string>& corpus, Rng& rng) {
    static const char* kTokens[] = {"{", "}", "[", "]", "\"", ",", ":", "null", "true", "-1", "0", "1e400", "18446744073709551615",
                                    "9223372036854775808", "4294967296", "\\u0000", "\xff", "re:", "(", ")", "*", "{1000}", "__metadata__",
                                    "dtype", "shape", "data_offsets", "quant_method", "config_groups", "F4", "BF16", "I32"};
    static const std::uint64_t kLengths[] = {0, 1, 7, 8, 100'000'000, 100'000'001, ~std::uint64_t{0}, std::uint64_t{1} << 63, 1u << 20};
    switch (pick(rng, 9)) {
        case 0:  // bit flip
            if (!s.empty()) s[pick(rng, s.size())] ^= static_cast<char>(1u << pick(rng, 8));
            break;
        case 1:  // interesting byte
            if (!s.empty()) s[pick(rng, s.size())] = "\x00\xff{}[]\",:0-9"[pick(rng, 13)];
            break;
        case 2: {  // insert a JSON token
            const char* t = kTokens[pick(rng, sizeof kTokens / sizeof kTokens[0])];
            s.insert(pick(rng, s.size() + 1), t);
            break;
        }
        case 3:  // delete a run
            if (!s.empty()) {
                const std::size_t at = pick(rng, s.size());
                s.erase(at, 1 + pick(rng, std::min<std::size_t>(64, s.size() - at)));
            }
            break;
        case 4:  // header length: interesting values and off-by-one
            if (pick(rng, 2) == 0) put_u64(s, kLengths[pick(rng, sizeof kLengths / sizeof kLengths[0])]);
            else put_u64(s, get_u64(s) + (pick(rng, 2) ? 1 : static_cast<std::uint64_t>(-1)));
            break;
        case 5: {  // replace a number with an extreme one
            std::size_t at = pick(rng, s.size() + 1);
            while (at < s.size() && !(s[at] >= '0' && s[at] <= '9')) ++at;
            std::size_t end = at;
            while (end < s.size() && s[end] >= '0' && s[end] <= '9') ++end;
            const char* nums[] = {"18446744073709551615", "9223372036854775807", "0", "-5", "3.5", "4294967296", "100000000"};
            s.replace(at, end - at, nums[pick(rng, 7)]);
            break;
        }
        case 6: {  // duplicate a slice (nesting, repeated keys)
            if (s.empty()) break;
            const std::size_t at = pick(rng, s.size());
            const std::string piece = s.substr(at, 1 + pick(rng, 128));
            s.insert(pick(rng, s.size() + 1), piece);
            break;
        }
        case 7: {  // splice with another seed
            const std::string& o = corpus[pick(rng, corpus.size())];
            s = s.substr(0, pick(rng, s.size() + 1)) + o.substr(pick(rng, o.size() + 1));
            break;
        }
        case 8:  // truncate
            s.resize(pick(rng, s.size() + 1));
            break;
    }
    if (s.size() > kMaxInputBytes) s.resize(kMaxInputBytes);
}

}  // namespace

int main(int argc, char** argv) {
    double seconds = 5.0;
    long long iterations = -1;
    std::uint64_t seed = 20261129;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--iterations")) iterations = std::atoll(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--seed")) seed = std::strtoull(argv[i + 1], nullptr, 10);
        else {
            std::fprintf(stderr, "usage: %s [--seconds S] [--iterations N] [--seed X]\n", argv[0]);
            return 2;
        }
    }
    const std::vector<std::string> corpus = quantplan::fuzz::seed_corpus();
    Rng rng(seed);
    const auto start = std::chrono::steady_clock::now();
    long long runs = 0;
    std::size_t largest = 0;
    std::string input;
    while (true) {
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if ((iterations >= 0 && runs >= iterations) || (iterations < 0 && elapsed >= seconds)) break;
        // Mostly keep mutating the current input; now and then restart from a seed.
        if (runs % 64 == 0 || input.empty()) input = corpus[pick(rng, corpus.size())];
        const std::size_t edits = 1 + pick(rng, 4);
        for (std::size_t e = 0; e < edits; ++e) mutate(input, corpus, rng);
        g_largest_allocation = 0;
        try {
            quantplan::fuzz::run_one_input(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
        } catch (const std::exception& e) {
            std::fprintf(stderr, "FAIL after %lld inputs (seed %llu): %s escaped: %s\ninput (%zu bytes) written to fuzz_failure.bin\n", runs,
                         static_cast<unsigned long long>(seed), typeid(e).name(), e.what(), input.size());
            if (FILE* f = std::fopen("fuzz_failure.bin", "wb")) {
                std::fwrite(input.data(), 1, input.size(), f);
                std::fclose(f);
            }
            return 1;
        }
        if (g_largest_allocation > kMaxAllocationBytes) {
            std::fprintf(stderr, "FAIL after %lld inputs (seed %llu): an allocation of %zu bytes for a %zu-byte input (bound %zu)\n", runs,
                         static_cast<unsigned long long>(seed), g_largest_allocation, input.size(), kMaxAllocationBytes);
            return 1;
        }
        largest = std::max(largest, g_largest_allocation);
        ++runs;
    }
    std::printf("fuzz_checkpoint_parsers: %lld inputs in %.1f s, seed %llu, no escape, largest allocation %zu bytes (bound %zu)\n", runs,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), static_cast<unsigned long long>(seed), largest,
                kMaxAllocationBytes);
    return runs > 0 ? 0 : 1;
}
