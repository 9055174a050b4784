// Device self-test of the shared bit-level helpers: the kernels use numeric.h's conversions and, for
// speed, some hardware conversions (cvt.rn.bf16.f32, cvt.rn.f16.f32, cvt.f16x2.e4m3x2 and the
// saturating float -> E4M3 conversion). This kernel runs both on the same inputs and counts
// disagreements, so a GPU run proves that the host references (which only know the helpers) describe
// what the hardware path computes.
//
// Layout: `inputs` device fp32 [count]; `mismatches` device uint32 [4] (bf16, fp16, fp8 encode,
// fp8 decode) accumulated with atomicAdd; the first disagreeing input index of each kind in
// `first` [4] (atomicMin). Preconditions: count >= 0; mismatches and first initialised by the
// launcher. Configuration: one kernel, any architecture (the fp8 hardware path from sm_89; below it
// cuda_fp8.h emulates the conversion, which is compared just the same).
#include "kernels/selftest.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "core/base/error.h"
#include "kernels/cuda_check.h"
#include "kernels/numeric.h"

namespace quantplan::kernels {
namespace {

__device__ __forceinline__ bool is_nan_bits16(std::uint16_t b, bool bf16) {
    return bf16 ? (b & 0x7FFFu) > 0x7F80u : (b & 0x7FFFu) > 0x7C00u;
}

__global__ void numeric_selftest_kernel(const float* __restrict__ inputs, std::int64_t count, std::uint32_t* mismatches,
                                        std::uint32_t* first) {
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const float x = inputs[i];
        const auto idx = static_cast<std::uint32_t>(i);
        const std::uint16_t hb = __bfloat16_as_ushort(__float2bfloat16_rn(x));
        const std::uint16_t sb = float_to_bf16(x);
        if (hb != sb && !(is_nan_bits16(hb, true) && is_nan_bits16(sb, true))) {
            atomicAdd(&mismatches[0], 1u);
            atomicMin(&first[0], idx);
        }
        const std::uint16_t hh = __half_as_ushort(__float2half_rn(x));
        const std::uint16_t sh = float_to_fp16(x);
        if (hh != sh && !(is_nan_bits16(hh, false) && is_nan_bits16(sh, false))) {
            atomicAdd(&mismatches[1], 1u);
            atomicMin(&first[1], idx);
        }
        const auto h8 = static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
        const std::uint8_t s8 = float_to_fp8_e4m3(x);
        if (h8 != s8 && !((h8 & 0x7F) == 0x7F && (s8 & 0x7F) == 0x7F)) {
            atomicAdd(&mismatches[2], 1u);
            atomicMin(&first[2], idx);
        }
        if (i < 256) {  // every E4M3 code, decoded both ways
            const auto code = static_cast<std::uint8_t>(i);
            const __half_raw hr = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(code), __NV_E4M3);
            const float hw = __half2float(__half(hr));
            const float sw = fp8_e4m3_to_float(code);
            const bool both_nan = hw != hw && sw != sw;
            if (!both_nan && hw != sw) {
                atomicAdd(&mismatches[3], 1u);
                atomicMin(&first[3], idx);
            }
        }
    }
}

}  // namespace

NumericSelftest numeric_selftest(const float* inputs, std::int64_t count, cudaStream_t stream) {
    if (!inputs || count < 256) throw Error("numeric_selftest", "needs at least 256 device inputs (every E4M3 code is decoded)");
    DeviceBuffer counters(8 * sizeof(std::uint32_t));
    std::uint32_t init[8] = {0, 0, 0, 0, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};
    QP_CUDA_CHECK(cudaMemcpyAsync(counters.get(), init, sizeof init, cudaMemcpyHostToDevice, stream));
    numeric_selftest_kernel<<<256, 256, 0, stream>>>(inputs, count, counters.as<std::uint32_t>(), counters.as<std::uint32_t>() + 4);
    QP_CHECK_LAUNCH("numeric_selftest_kernel");
    std::uint32_t out[8] = {};
    QP_CUDA_CHECK(cudaMemcpyAsync(out, counters.get(), sizeof out, cudaMemcpyDeviceToHost, stream));
    QP_CUDA_CHECK(cudaStreamSynchronize(stream));
    NumericSelftest r;
    for (int i = 0; i < 4; ++i) {
        r.mismatches[i] = out[i];
        r.first_mismatch[i] = out[4 + i] == 0xFFFFFFFFu ? -1 : static_cast<std::int64_t>(out[4 + i]);
    }
    return r;
}

}  // namespace quantplan::kernels
