#pragma once
// INT4 weight formats for the W4A16 kernels: the checkpoint layouts (AutoAWQ GEMM, GPTQ) and the
// kernels' own layout they are repacked into at load time, with unpack and the dense dequantized
// weight. Plain C++ (no CUDA): the host references and the tests use it, the launchers consume it.
//
// Logical weight: W[n][k] = (q[n][k] - z[g][n]) * s[g][n] for output channel n < N, input channel
// k < K, group g = k / G (G = group size); q and z are unsigned 0..15, s is fp16 or bf16. A
// symmetric checkpoint has no zero points; its zero is 8 (GPTQ sym, compressed-tensors offset).
//
// Kernel layout (W4Packed), what w4a16_gemm.cu and dequant_gemm.cu read:
//   qweight uint32 [N][K/8]  row n holds input channels in order; nibble j (bits 4j..4j+3) of
//                            word w is k = 8w + j. A 16-byte load brings 32 consecutive k of one
//                            row, all in one group (G is a multiple of 32).
//   scales  uint16 [N][K/G]  fp16 or bf16 bits (scale_type), row-major by output channel.
//   zeros   uint8  [N][K/G]  0..15; empty when symmetric (zero 8).
//   k_perm  int32  [K]       empty, or the act-order permutation: kernel input channel j is the
//                            checkpoint's channel k_perm[j]; activations must be permuted to match
//                            (w4a16_permute_activations) before the GEMM.
// Bits per weight: 4 + 16/G (+ 8/G with zeros); bytes in w4_packed_bytes().
//
// Checkpoint layouts (../shared/reference/checkpoint-formats.md §1, §2; kernels.md (a)):
//   AutoAWQ GEMM: qweight I32 [K][N/8] packed along N, nibble i holds column 8c + kAwqOrder[i]
//                 (kAwqOrder = {0,2,4,6,1,3,5,7}; column j sits in nibble kAwqReverseOrder[j] =
//                 {0,4,1,5,2,6,3,7}); qzeros I32 [K/G][N/8] with the same interleave; scales F16
//                 [K/G][N]. Always asymmetric.
//   GPTQ:         qweight I32 [K/8][N] packed along K (nibble j of row r is k = 8r + j); qzeros I32
//                 [G'][N/8] packed along N in order; scales F16 [G'][N]; g_idx I32 [K] (group of each
//                 input channel; act-order permutes it). checkpoint_format "gptq" (v1) stores zeros
//                 minus 1 (4-bit sym qzeros hold 7s); "gptq_v2" stores them as they are.
#include <array>
#include <cstdint>
#include <vector>

#include "kernels/numeric.h"

namespace quantplan::kernels {

// Group sizes the kernels support (input channels sharing one scale).
inline constexpr std::array<std::int64_t, 3> kW4GroupSizes{32, 64, 128};

// Zero point of a symmetric 4-bit checkpoint.
inline constexpr std::uint8_t kW4SymmetricZero = 8;

// AutoAWQ's nibble order: nibble i of a packed word holds column kAwqOrder[i] of its 8.
inline constexpr std::array<int, 8> kAwqOrder{0, 2, 4, 6, 1, 3, 5, 7};
// The inverse: column j of 8 sits in nibble kAwqReverseOrder[j].
inline constexpr std::array<int, 8> kAwqReverseOrder{0, 4, 1, 5, 2, 6, 3, 7};

// An INT4 weight in its plain form: one byte per weight. The unpacked twin of W4Packed.
struct W4Logical {
    std::int64_t n = 0;                 // output channels
    std::int64_t k = 0;                 // input channels
    std::int64_t group_size = 128;      // input channels per scale group
    Half16 scale_type = Half16::Fp16;   // format of `scales`
    std::vector<std::uint8_t> q;        // [N][K], 0..15
    std::vector<std::uint16_t> scales;  // [N][K/G], bits in scale_type
    std::vector<std::uint8_t> zeros;    // [N][K/G], 0..15; empty = symmetric (zero 8)

    bool symmetric() const { return zeros.empty(); }
    std::int64_t groups() const { return k / group_size; }
};

// An INT4 weight in the kernels' layout (see the header comment).
struct W4Packed {
    std::int64_t n = 0;
    std::int64_t k = 0;
    std::int64_t group_size = 128;
    Half16 scale_type = Half16::Fp16;
    std::vector<std::uint32_t> qweight;  // [N][K/8]
    std::vector<std::uint16_t> scales;   // [N][K/G]
    std::vector<std::uint8_t> zeros;     // [N][K/G] or empty
    std::vector<std::int32_t> k_perm;    // [K] or empty

    bool symmetric() const { return zeros.empty(); }
    std::int64_t groups() const { return k / group_size; }
};

// AutoAWQ GEMM-version tensors of one linear layer.
struct AwqTensors {
    std::int64_t n = 0;
    std::int64_t k = 0;
    std::int64_t group_size = 128;
    std::vector<std::int32_t> qweight;  // [K][N/8]
    std::vector<std::int32_t> qzeros;   // [K/G][N/8]
    std::vector<std::uint16_t> scales;  // [K/G][N] fp16 bits
};

// GPTQ tensors of one linear layer (4-bit, int32 packing).
struct GptqTensors {
    std::int64_t n = 0;
    std::int64_t k = 0;
    std::int64_t group_size = 128;
    bool zeros_minus_one = true;        // checkpoint_format "gptq" (v1); false for "gptq_v2"
    std::vector<std::int32_t> qweight;  // [K/8][N]
    std::vector<std::int32_t> qzeros;   // [K/G][N/8]
    std::vector<std::uint16_t> scales;  // [K/G][N] fp16 bits
    std::vector<std::int32_t> g_idx;    // [K]
};

// Checks the extents of a weight for the kernels: N >= 1, K a positive multiple of the group size,
// group size one of kW4GroupSizes. Throws quantplan::Error naming `what` otherwise.
void check_w4_shape(std::int64_t n, std::int64_t k, std::int64_t group_size, const char* what);

// Checks that every vector of `w` has the size its extents imply and every nibble/zero is 0..15.
void check_w4_logical(const W4Logical& w);

// Packs a logical weight into the kernels' layout (no permutation).
W4Packed pack_w4(const W4Logical& w);

// Unpacks the kernels' layout. The result is in kernel channel order (k_perm is not undone).
W4Logical unpack_w4(const W4Packed& packed);

// Bytes the packed weight occupies on the GPU (qweight + scales + zeros + k_perm).
std::uint64_t w4_packed_bytes(const W4Packed& packed);

// Dense dequantized weight [N][K] in float: (q - z) * s, exactly as the kernels compute it before
// any rounding to 16 bits.
std::vector<float> dequantize_w4(const W4Logical& w);

// Writes `w` as AutoAWQ GEMM tensors (what an exporter does). Requires an asymmetric weight and
// N % 8 == 0; scales are written as fp16 (the weight's scales must be fp16).
AwqTensors to_awq(const W4Logical& w);

// Repacks AutoAWQ GEMM tensors into the kernels' layout. Throws quantplan::Error naming the tensor
// for a shape that does not match (N % 8, K % G, vector sizes).
W4Packed repack_awq(const AwqTensors& awq);

// Writes `w` as GPTQ tensors with g_idx = k / G (no act-order). Symmetric weights get zeros 8
// (stored 7 with zeros_minus_one). Requires N % 8 == 0, K % 8 == 0, fp16 scales.
GptqTensors to_gptq(const W4Logical& w, bool zeros_minus_one);

// Repacks GPTQ tensors. A g_idx other than k / G (act-order) is sorted into k_perm: kernel channel
// j = checkpoint channel k_perm[j], grouped contiguously. Every group must then hold exactly G
// channels. Zero points equal to 8 everywhere are dropped (symmetric).
W4Packed repack_gptq(const GptqTensors& gptq);

// Dense dequantized weight [N][K] of GPTQ tensors in checkpoint channel order (the meaning of the
// checkpoint, independent of any repacking).
std::vector<float> dequantize_gptq(const GptqTensors& gptq);

// Dense dequantized weight [N][K] of AutoAWQ tensors.
std::vector<float> dequantize_awq(const AwqTensors& awq);

}  // namespace quantplan::kernels
