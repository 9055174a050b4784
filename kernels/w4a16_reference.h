#pragma once
// Host references of the W4A16 ops (w4a16_gemm.h): the fused GEMM, the dequantize kernel of the
// generic path, and the act-order activation permutation. Same contracts as the launchers, with
// host vectors instead of device pointers.
#include <cstdint>
#include <vector>

#include "kernels/numeric.h"
#include "kernels/reference.h"
#include "kernels/w4a16_pack.h"

namespace quantplan::kernels {

// Y = X W^T for X [M][K] 16-bit (act_type) in kernel channel order (already permuted when
// w.k_perm is set) and the packed weight; exact in double, with sum |x w| for the error bound.
DenseResult w4a16_gemm_reference(const W4Packed& w, const std::vector<std::uint16_t>& x, std::int64_t m, Half16 act_type);

// The accepted error of either W4A16 path (fused kernel or dequantize + cuBLASLt) against the
// reference: fp32 accumulation over K, the dequantized weight rounded to the activation format
// (the tensor-core path multiplies 16-bit operands), and the output rounded to act_type.
Tolerance w4a16_tolerance(std::int64_t k, Half16 act_type);

// The dequantize kernel's output: W [N][K] as 16-bit `out_type`, each element
// round((q - z) * s) computed in float, bit-exact.
std::vector<std::uint16_t> w4a16_dequantize_reference(const W4Packed& w, Half16 out_type);

// Activations gathered into kernel channel order: out[m][j] = x[m][k_perm[j]] (bit-exact).
std::vector<std::uint16_t> w4a16_permute_reference(const std::vector<std::uint16_t>& x, const std::vector<std::int32_t>& k_perm,
                                                   std::int64_t m, std::int64_t k);

}  // namespace quantplan::kernels
