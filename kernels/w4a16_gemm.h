#pragma once
// W4A16 GEMM with fused group-wise dequantization: Y[M][N] = X[M][K] W^T with INT4 weights in the
// kernels' layout (w4a16_pack.h) and fp16 or bf16 activations. Host reference:
// w4a16_reference.h. Algorithms, layouts and preconditions: w4a16_gemm.cu.
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/cuda_check.h"
#include "kernels/numeric.h"
#include "kernels/w4a16_pack.h"

namespace quantplan::kernels {

// A packed weight on the device (plain pointers into device memory, not owned).
struct W4DeviceWeights {
    const std::uint32_t* qweight = nullptr;  // device [N][K/8], 16-byte aligned
    const std::uint16_t* scales = nullptr;   // device [N][K/G], fp16 or bf16 bits (scale_type)
    const std::uint8_t* zeros = nullptr;     // device [N][K/G] 0..15, or null: symmetric (zero 8)
    std::int64_t n = 0;
    std::int64_t k = 0;
    std::int64_t group_size = 128;
    Half16 scale_type = Half16::Fp16;
};

// A packed weight uploaded to the device, owning its buffers.
struct W4DeviceBuffers {
    DeviceBuffer qweight;
    DeviceBuffer scales;
    DeviceBuffer zeros;   // empty when symmetric
    DeviceBuffer k_perm;  // int32 [K], empty without act-order
    std::int64_t n = 0;
    std::int64_t k = 0;
    std::int64_t group_size = 128;
    Half16 scale_type = Half16::Fp16;

    // The non-owning view the launchers take.
    W4DeviceWeights view() const;
};

// Copies a packed weight to the device (synchronous).
W4DeviceBuffers upload_w4(const W4Packed& packed);

// The kernel a W4A16 GEMM runs.
enum class W4Path : std::uint8_t {
    Auto,        // chosen by M and the device (w4a16_choose_path)
    Gemv,        // CUDA-core GEMV, up to 4 rows per pass: decode sizes
    TensorCore,  // WMMA tiles (16 or 64 rows x 64 columns) with dequantization into shared memory
};

// The path Auto picks for M rows of `act_type` on a device of compute capability `cc` (x10):
// GEMV for M <= 4, tensor cores above (fp16 from sm_75, bf16 from sm_80), GEMV where no tensor
// core takes the type.
W4Path w4a16_choose_path(std::int64_t m, Half16 act_type, int cc);

// Bytes of fp32 workspace the tensor-core path uses for split-K on M rows and N columns (0 when it
// never splits: M > 256).
std::uint64_t w4a16_workspace_bytes(std::int64_t m, std::int64_t n);

// Y = X W^T. x: device [M][K] 16-bit act_type, in kernel channel order (run
// w4a16_permute_activations first when the weight has a k_perm); y: device [M][N] act_type.
// workspace: device fp32, at least w4a16_workspace_bytes(m, n) bytes for full speed at decode
// sizes, or null (then no split-K). Preconditions, checked (quantplan::Error naming the argument):
// M >= 1, the weight passes check_w4_shape, x, y and qweight 16-byte aligned. Asynchronous on
// `stream`; launch failures throw KernelError.
void w4a16_gemm(const W4DeviceWeights& w, const std::uint16_t* x, std::int64_t m, Half16 act_type, std::uint16_t* y, float* workspace,
                std::uint64_t workspace_bytes, cudaStream_t stream, W4Path path = W4Path::Auto);

// x_out[m][j] = x[m][k_perm[j]] for act-order weights (device pointers, k_perm int32 [K]).
void w4a16_permute_activations(const std::uint16_t* x, const std::int32_t* k_perm, std::int64_t m, std::int64_t k, std::uint16_t* x_out,
                               cudaStream_t stream);

// The generic path's first kernel: W [N][K] 16-bit `out_type` = (q - z) * s, bit-exact with
// w4a16_dequantize_reference. w_out: device, 16-byte aligned.
void w4a16_dequantize(const W4DeviceWeights& w, Half16 out_type, std::uint16_t* w_out, cudaStream_t stream);

}  // namespace quantplan::kernels
