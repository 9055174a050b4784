#include "kernels/w4a16_pack.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/base/error.h"

namespace quantplan::kernels {
namespace {

// Largest extent accepted for one weight dimension: keeps N*K far from int64 overflow and the
// packed sizes within what one allocation can hold.
constexpr std::int64_t kMaxExtent = std::int64_t{1} << 20;

std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(v); }

void check_size(const char* what, std::size_t actual, std::int64_t expected) {
    if (actual != sz(expected))
        throw Error(what, "has " + std::to_string(actual) + " elements, expected " + std::to_string(expected));
}

std::uint32_t u32(std::int32_t v) { return static_cast<std::uint32_t>(v); }
std::int32_t i32(std::uint32_t v) { return static_cast<std::int32_t>(v); }

}  // namespace

void check_w4_shape(std::int64_t n, std::int64_t k, std::int64_t group_size, const char* what) {
    const std::string w(what);
    if (std::find(kW4GroupSizes.begin(), kW4GroupSizes.end(), group_size) == kW4GroupSizes.end())
        throw Error(w + ": group_size", "must be 32, 64 or 128, got " + std::to_string(group_size));
    if (n < 1 || n > kMaxExtent) throw Error(w + ": n", "must be in 1.." + std::to_string(kMaxExtent) + ", got " + std::to_string(n));
    if (k < group_size || k > kMaxExtent || k % group_size != 0)
        throw Error(w + ": k", "must be a positive multiple of the group size " + std::to_string(group_size) + " (at most " +
                                   std::to_string(kMaxExtent) + "), got " + std::to_string(k));
}

void check_w4_logical(const W4Logical& w) {
    check_w4_shape(w.n, w.k, w.group_size, "int4 weight");
    check_size("int4 weight: q", w.q.size(), w.n * w.k);
    check_size("int4 weight: scales", w.scales.size(), w.n * w.groups());
    if (!w.zeros.empty()) check_size("int4 weight: zeros", w.zeros.size(), w.n * w.groups());
    for (const std::uint8_t v : w.q)
        if (v > 15) throw Error("int4 weight: q", "holds " + std::to_string(v) + ", outside 0..15");
    for (const std::uint8_t v : w.zeros)
        if (v > 15) throw Error("int4 weight: zeros", "holds " + std::to_string(v) + ", outside 0..15");
}

W4Packed pack_w4(const W4Logical& w) {
    check_w4_logical(w);
    W4Packed p;
    p.n = w.n;
    p.k = w.k;
    p.group_size = w.group_size;
    p.scale_type = w.scale_type;
    p.scales = w.scales;
    p.zeros = w.zeros;
    const std::int64_t words = w.k / 8;
    p.qweight.assign(sz(w.n * words), 0u);
    for (std::int64_t n = 0; n < w.n; ++n)
        for (std::int64_t k = 0; k < w.k; ++k) {
            std::uint32_t& word = p.qweight[sz(n * words + k / 8)];
            word = with_nibble(word, static_cast<int>(k % 8), w.q[sz(n * w.k + k)]);
        }
    return p;
}

W4Logical unpack_w4(const W4Packed& p) {
    check_w4_shape(p.n, p.k, p.group_size, "packed int4 weight");
    const std::int64_t words = p.k / 8;
    check_size("packed int4 weight: qweight", p.qweight.size(), p.n * words);
    check_size("packed int4 weight: scales", p.scales.size(), p.n * p.groups());
    if (!p.zeros.empty()) check_size("packed int4 weight: zeros", p.zeros.size(), p.n * p.groups());
    W4Logical w;
    w.n = p.n;
    w.k = p.k;
    w.group_size = p.group_size;
    w.scale_type = p.scale_type;
    w.scales = p.scales;
    w.zeros = p.zeros;
    w.q.resize(sz(p.n * p.k));
    for (std::int64_t n = 0; n < p.n; ++n)
        for (std::int64_t k = 0; k < p.k; ++k)
            w.q[sz(n * p.k + k)] = static_cast<std::uint8_t>(nibble(p.qweight[sz(n * words + k / 8)], static_cast<int>(k % 8)));
    return w;
}

std::uint64_t w4_packed_bytes(const W4Packed& p) {
    return p.qweight.size() * sizeof(std::uint32_t) + p.scales.size() * sizeof(std::uint16_t) + p.zeros.size() +
           p.k_perm.size() * sizeof(std::int32_t);
}

std::vector<float> dequantize_w4(const W4Logical& w) {
    check_w4_logical(w);
    std::vector<float> out(sz(w.n * w.k));
    const std::int64_t groups = w.groups();
    for (std::int64_t n = 0; n < w.n; ++n)
        for (std::int64_t k = 0; k < w.k; ++k) {
            const std::int64_t g = n * groups + k / w.group_size;
            const float zero = w.zeros.empty() ? static_cast<float>(kW4SymmetricZero) : static_cast<float>(w.zeros[sz(g)]);
            const float scale = half16_to_float(w.scales[sz(g)], w.scale_type);
            out[sz(n * w.k + k)] = nibble_minus_zero(w.q[sz(n * w.k + k)], zero) * scale;
        }
    return out;
}

AwqTensors to_awq(const W4Logical& w) {
    check_w4_logical(w);
    if (w.symmetric()) throw Error("awq", "AutoAWQ checkpoints always carry zero points");
    if (w.n % 8 != 0) throw Error("awq: n", "must be a multiple of 8, got " + std::to_string(w.n));
    if (w.scale_type != Half16::Fp16) throw Error("awq: scales", "AutoAWQ stores fp16 scales");
    AwqTensors a;
    a.n = w.n;
    a.k = w.k;
    a.group_size = w.group_size;
    const std::int64_t cols = w.n / 8;
    const std::int64_t groups = w.groups();
    a.qweight.assign(sz(w.k * cols), 0);
    a.qzeros.assign(sz(groups * cols), 0);
    a.scales.resize(sz(groups * w.n));
    for (std::int64_t k = 0; k < w.k; ++k)
        for (std::int64_t c = 0; c < cols; ++c) {
            std::uint32_t word = 0;
            for (int i = 0; i < 8; ++i) word = with_nibble(word, i, w.q[sz((8 * c + kAwqOrder[sz(i)]) * w.k + k)]);
            a.qweight[sz(k * cols + c)] = i32(word);
        }
    for (std::int64_t g = 0; g < groups; ++g) {
        for (std::int64_t c = 0; c < cols; ++c) {
            std::uint32_t word = 0;
            for (int i = 0; i < 8; ++i) word = with_nibble(word, i, w.zeros[sz((8 * c + kAwqOrder[sz(i)]) * groups + g)]);
            a.qzeros[sz(g * cols + c)] = i32(word);
        }
        for (std::int64_t n = 0; n < w.n; ++n) a.scales[sz(g * w.n + n)] = w.scales[sz(n * groups + g)];
    }
    return a;
}

namespace {

W4Logical awq_logical(const AwqTensors& a) {
    check_w4_shape(a.n, a.k, a.group_size, "awq");
    if (a.n % 8 != 0) throw Error("awq: qweight", "N must be a multiple of 8, got " + std::to_string(a.n));
    const std::int64_t cols = a.n / 8;
    const std::int64_t groups = a.k / a.group_size;
    check_size("awq: qweight", a.qweight.size(), a.k * cols);
    check_size("awq: qzeros", a.qzeros.size(), groups * cols);
    check_size("awq: scales", a.scales.size(), groups * a.n);
    W4Logical w;
    w.n = a.n;
    w.k = a.k;
    w.group_size = a.group_size;
    w.scale_type = Half16::Fp16;
    w.q.resize(sz(a.n * a.k));
    w.scales.resize(sz(a.n * groups));
    w.zeros.resize(sz(a.n * groups));
    for (std::int64_t k = 0; k < a.k; ++k)
        for (std::int64_t c = 0; c < cols; ++c) {
            const std::uint32_t word = u32(a.qweight[sz(k * cols + c)]);
            for (int j = 0; j < 8; ++j) w.q[sz((8 * c + j) * a.k + k)] = static_cast<std::uint8_t>(nibble(word, kAwqReverseOrder[sz(j)]));
        }
    for (std::int64_t g = 0; g < groups; ++g) {
        for (std::int64_t c = 0; c < cols; ++c) {
            const std::uint32_t word = u32(a.qzeros[sz(g * cols + c)]);
            for (int j = 0; j < 8; ++j)
                w.zeros[sz((8 * c + j) * groups + g)] = static_cast<std::uint8_t>(nibble(word, kAwqReverseOrder[sz(j)]));
        }
        for (std::int64_t n = 0; n < a.n; ++n) w.scales[sz(n * groups + g)] = a.scales[sz(g * a.n + n)];
    }
    return w;
}

// GPTQ tensors read in checkpoint channel order, with the group of each channel from g_idx.
struct GptqPlain {
    W4Logical w;                     // q in checkpoint order; scales/zeros indexed by g_idx group
    std::vector<std::int32_t> g_idx;
};

GptqPlain gptq_plain(const GptqTensors& t) {
    check_w4_shape(t.n, t.k, t.group_size, "gptq");
    if (t.n % 8 != 0) throw Error("gptq: qzeros", "N must be a multiple of 8, got " + std::to_string(t.n));
    const std::int64_t rows = t.k / 8;
    const std::int64_t groups = t.k / t.group_size;
    const std::int64_t cols = t.n / 8;
    check_size("gptq: qweight", t.qweight.size(), rows * t.n);
    check_size("gptq: qzeros", t.qzeros.size(), groups * cols);
    check_size("gptq: scales", t.scales.size(), groups * t.n);
    check_size("gptq: g_idx", t.g_idx.size(), t.k);
    for (const std::int32_t g : t.g_idx)
        if (g < 0 || g >= groups) throw Error("gptq: g_idx", "holds group " + std::to_string(g) + ", outside 0.." + std::to_string(groups - 1));
    GptqPlain p;
    p.g_idx = t.g_idx;
    W4Logical& w = p.w;
    w.n = t.n;
    w.k = t.k;
    w.group_size = t.group_size;
    w.scale_type = Half16::Fp16;
    w.q.resize(sz(t.n * t.k));
    w.scales.resize(sz(t.n * groups));
    w.zeros.resize(sz(t.n * groups));
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t n = 0; n < t.n; ++n) {
            const std::uint32_t word = u32(t.qweight[sz(r * t.n + n)]);
            for (int j = 0; j < 8; ++j) w.q[sz(n * t.k + 8 * r + j)] = static_cast<std::uint8_t>(nibble(word, j));
        }
    const std::uint32_t shift = t.zeros_minus_one ? 1u : 0u;
    for (std::int64_t g = 0; g < groups; ++g) {
        for (std::int64_t c = 0; c < cols; ++c) {
            const std::uint32_t word = u32(t.qzeros[sz(g * cols + c)]);
            for (int j = 0; j < 8; ++j) {
                const std::uint32_t z = nibble(word, j) + shift;
                if (z > 15) throw Error("gptq: qzeros", "a v1 zero of 15 means 16 after the +1 shift, outside 0..15");
                w.zeros[sz((8 * c + j) * groups + g)] = static_cast<std::uint8_t>(z);
            }
        }
        for (std::int64_t n = 0; n < t.n; ++n) w.scales[sz(n * groups + g)] = t.scales[sz(g * t.n + n)];
    }
    return p;
}

}  // namespace

W4Packed repack_awq(const AwqTensors& awq) { return pack_w4(awq_logical(awq)); }

std::vector<float> dequantize_awq(const AwqTensors& awq) { return dequantize_w4(awq_logical(awq)); }

GptqTensors to_gptq(const W4Logical& w, bool zeros_minus_one) {
    check_w4_logical(w);
    if (w.n % 8 != 0) throw Error("gptq: n", "must be a multiple of 8, got " + std::to_string(w.n));
    if (w.scale_type != Half16::Fp16) throw Error("gptq: scales", "GPTQ stores fp16 scales");
    GptqTensors t;
    t.n = w.n;
    t.k = w.k;
    t.group_size = w.group_size;
    t.zeros_minus_one = zeros_minus_one;
    const std::int64_t rows = w.k / 8;
    const std::int64_t groups = w.groups();
    const std::int64_t cols = w.n / 8;
    t.qweight.assign(sz(rows * w.n), 0);
    t.qzeros.assign(sz(groups * cols), 0);
    t.scales.resize(sz(groups * w.n));
    t.g_idx.resize(sz(w.k));
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t n = 0; n < w.n; ++n) {
            std::uint32_t word = 0;
            for (int j = 0; j < 8; ++j) word = with_nibble(word, j, w.q[sz(n * w.k + 8 * r + j)]);
            t.qweight[sz(r * w.n + n)] = i32(word);
        }
    for (std::int64_t g = 0; g < groups; ++g) {
        for (std::int64_t c = 0; c < cols; ++c) {
            std::uint32_t word = 0;
            for (int j = 0; j < 8; ++j) {
                const std::uint32_t z = w.zeros.empty() ? kW4SymmetricZero : w.zeros[sz((8 * c + j) * groups + g)];
                if (zeros_minus_one && z == 0) throw Error("gptq: qzeros", "a zero point of 0 cannot be stored minus one");
                word = with_nibble(word, j, z - (zeros_minus_one ? 1u : 0u));
            }
            t.qzeros[sz(g * cols + c)] = i32(word);
        }
        for (std::int64_t n = 0; n < w.n; ++n) t.scales[sz(g * w.n + n)] = w.scales[sz(n * groups + g)];
    }
    for (std::int64_t k = 0; k < w.k; ++k) t.g_idx[sz(k)] = static_cast<std::int32_t>(k / w.group_size);
    return t;
}

W4Packed repack_gptq(const GptqTensors& gptq) {
    GptqPlain plain = gptq_plain(gptq);
    W4Logical& w = plain.w;
    bool trivial = true;
    for (std::int64_t k = 0; k < w.k && trivial; ++k) trivial = plain.g_idx[sz(k)] == k / w.group_size;
    std::vector<std::int32_t> perm;
    if (!trivial) {
        // Act-order: sort channels by group (stable), so each group is contiguous again.
        perm.resize(sz(w.k));
        std::iota(perm.begin(), perm.end(), 0);
        std::stable_sort(perm.begin(), perm.end(), [&](std::int32_t a, std::int32_t b) { return plain.g_idx[sz(a)] < plain.g_idx[sz(b)]; });
        for (std::int64_t j = 0; j < w.k; ++j)
            if (plain.g_idx[sz(perm[sz(j)])] != j / w.group_size)
                throw Error("gptq: g_idx", "group " + std::to_string(j / w.group_size) + " does not hold exactly " +
                                               std::to_string(w.group_size) + " input channels");
        std::vector<std::uint8_t> q(w.q.size());
        for (std::int64_t n = 0; n < w.n; ++n)
            for (std::int64_t j = 0; j < w.k; ++j) q[sz(n * w.k + j)] = w.q[sz(n * w.k + perm[sz(j)])];
        w.q = std::move(q);
    }
    if (std::all_of(w.zeros.begin(), w.zeros.end(), [](std::uint8_t z) { return z == kW4SymmetricZero; })) w.zeros.clear();
    W4Packed p = pack_w4(w);
    p.k_perm = std::move(perm);
    return p;
}

std::vector<float> dequantize_gptq(const GptqTensors& gptq) {
    const GptqPlain plain = gptq_plain(gptq);
    const W4Logical& w = plain.w;
    const std::int64_t groups = w.groups();
    std::vector<float> out(sz(w.n * w.k));
    for (std::int64_t n = 0; n < w.n; ++n)
        for (std::int64_t k = 0; k < w.k; ++k) {
            const std::int64_t g = n * groups + plain.g_idx[sz(k)];
            const float scale = fp16_to_float(w.scales[sz(g)]);
            out[sz(n * w.k + k)] = nibble_minus_zero(w.q[sz(n * w.k + k)], static_cast<float>(w.zeros[sz(g)])) * scale;
        }
    return out;
}

}  // namespace quantplan::kernels
