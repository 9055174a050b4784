#pragma once
// A synthetic calibration file for tests: the GEMMs `quantplan --validate` times (every linear shape
// of a model, batches 1..4096, the five GEMM kernels), with the byte counts kernels/validation.cpp
// writes (weights as stored, group 128 scales, bf16 activations in and out), and times that follow
// the roofline under `truth` exactly, each kernel's multiplied by its entry of `slowdown`. No GPU
// produced these numbers: created_by says so, and they never leave the tests.
#include <cstdint>
#include <map>
#include <string>

#include "core/hardware/calibration.h"
#include "core/hardware/gpu.h"
#include "core/model/model.h"

namespace quantplan::test {

inline Calibration synthetic_calibration(const ModelConfig& model, const GpuProfile& gpu, const EfficiencyProfile& truth,
                                         const std::map<std::string, double>& slowdown = {}) {
    Calibration c;
    c.created_by = "synthetic (tests/support/synthetic_calibration.h): not measured on a GPU";
    c.model = model.name;
    c.gpu_profile = gpu.id;
    c.device.name = gpu.name + " (synthetic)";
    c.device.compute_capability = "sm_90";
    const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    for (const LinearShape& s : model_linear_shapes(model)) {
        for (std::int64_t m = 1; m <= 4096; m *= 2) {
            const std::uint64_t act = 2 * u(m * s.k) + 2 * u(m * s.n);
            const std::uint64_t nk = u(s.n * s.k);
            const std::map<std::string, std::uint64_t> bytes{
                {"gemm_bf16", 2 * nk + act},
                {"w4a16_fused", nk / 2 + 2 * u(s.n * (s.k / 128)) + act},
                {"w4a16_generic", nk / 2 + 2 * u(s.n * (s.k / 128)) + act},
                {"w8a8_int8", nk + 4 * u(s.n) + act},
                {"w8a8_fp8", nk + 4 * u(s.n) + act},
            };
            for (const auto& [kernel, b] : bytes) {
                KernelMeasurement x;
                x.kernel = kernel;
                x.shape = s.label;
                x.batch = m;
                x.n = s.n;
                x.k = s.k;
                x.bytes = b;
                x.flop = 2.0 * static_cast<double>(m) * static_cast<double>(s.n) * static_cast<double>(s.k);
                const auto f = slowdown.find(kernel);
                x.measured_time_s = predict_kernel_time_s(x, gpu, truth) * (f == slowdown.end() ? 1.0 : f->second);
                c.measurements.push_back(x);
            }
        }
    }
    finish_calibration(c, gpu);
    return c;
}

}  // namespace quantplan::test
