#pragma once
// GPU profiles (data under assets/gpus/, each figure with its source) and efficiency profiles.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/scheme/scheme.h"

namespace quantplan {

// Dense peak throughput by matmul input and accumulate type, in FLOP/s (OP/s for integers).
// 0 means the GPU has no tensor-core path for that type.
struct PeakThroughput {
    double fp32_flop_per_s = 0;
    double tf32_flop_per_s = 0;
    double bf16_fp32acc_flop_per_s = 0;
    double fp16_fp32acc_flop_per_s = 0;
    double fp16_fp16acc_flop_per_s = 0;
    double fp8_fp32acc_flop_per_s = 0;
    double fp8_fp16acc_flop_per_s = 0;
    double int8_op_per_s = 0;
    double int4_op_per_s = 0;
    double fp4_flop_per_s = 0;
};

// One GPU. Memory figures in bytes, bandwidth in bytes/s.
struct GpuProfile {
    std::string id;                         // command-line name, e.g. "h100-sxm"
    std::string name;                       // display name, e.g. "NVIDIA H100 SXM5 80GB"
    std::string vendor;                     // "nvidia" or "amd"
    std::uint64_t memory_spec_bytes = 0;    // datasheet capacity (80 GB = 80e9)
    std::uint64_t memory_usable_bytes = 0;  // what the runtime reports as total (CUDA totalGlobalMem when known): engines budget against this
    double memory_bandwidth_bytes_per_s = 0;
    PeakThroughput peak;
    std::int64_t sm_count = 0;
    std::uint64_t l2_bytes = 0;
    std::string interconnect;                       // e.g. "NVLink4"
    double interconnect_bytes_per_s = 0;            // bidirectional per GPU
    // The GPU's link to its host (PCIe; bidirectional), over which NCCL stages an all-reduce when
    // the GPUs lack peer-to-peer; 0: no sourced figure.
    double host_link_bytes_per_s = 0;
    // Peer-to-peer between two of these GPUs in one node (false on GeForce cards: "GeForce cards do
    // not support P2P", NVIDIA in NVIDIA/nccl-tests#287).
    bool p2p = true;
    // Network between nodes, per GPU and direction (a DGX's one 400 Gb/s ConnectX-7 per GPU: 50e9);
    // 0 when the profile has no sourced figure (multi-node placement is then refused).
    double internode_bytes_per_s = 0;
    std::string compute_capability;                 // e.g. "sm_90"
    std::map<std::string, std::string> sources;     // field -> source
};

// The accumulate type a matmul runs with. cuBLASLt FP8 always accumulates in fp32 (gpus.md note),
// bf16 always does; fp16 may use fp16 accumulate (GeForce runs it at twice the fp32-acc rate).
enum class Accumulate : std::uint8_t { Fp32, Fp16 };

// Peak rate of `type` matmuls on `gpu` with `acc` accumulation, FLOP/s; 0 when unsupported.
double matmul_peak_flop_per_s(const GpuProfile& gpu, MatmulType type, Accumulate acc = Accumulate::Fp32);

// Name of a matmul type ("bf16", "fp8", ...).
const char* matmul_type_name(MatmulType type);

// Efficiency factors applied to peaks: `ideal` (all 1), `realistic` (seed 003's simulation:
// bandwidth 0.80, compute 0.55, fused weight-only kernel 0.95, generic 0.55), or `measured`
// (fitted by `quantplan --validate` on a real GPU).
struct EfficiencyProfile {
    std::string name;
    double bandwidth_efficiency = 1.0;      // achieved / peak memory bandwidth
    double compute_efficiency = 1.0;        // achieved / peak tensor-core throughput
    // Throughput of a weight-only GEMM relative to a bf16 GEMM of the same shape when compute
    // bound: fused (Marlin class) dequantizes in registers, generic dequantizes first.
    double fused_kernel_efficiency = 1.0;
    double generic_kernel_efficiency = 1.0;
    // Optional per-matmul-type compute efficiency overriding compute_efficiency (measured profiles).
    std::map<MatmulType, double> compute_efficiency_by_type;

    double compute_efficiency_for(MatmulType type) const;
};

// Weight-only kernel quality: fused dequant GEMM or dequantize-then-GEMM.
enum class KernelQuality : std::uint8_t { Fused, Generic };

// "fused" / "generic" <-> KernelQuality; throws Error("--kernel") on anything else.
KernelQuality parse_kernel_quality(std::string_view name);
const char* kernel_quality_name(KernelQuality k);

// The built-in profiles `ideal` and `realistic`; throws Error("--profile") for other names.
EfficiencyProfile builtin_efficiency_profile(std::string_view name);

// Parses a GPU profile JSON document (format in docs/gpu-profiles.md). Throws Error naming the field.
GpuProfile parse_gpu_profile(std::string_view json_text, const std::string& source);

// Loads every *.json under `gpus_dir`, sorted by id.
std::vector<GpuProfile> load_gpu_profiles(const std::filesystem::path& gpus_dir);

// Resolves `argument`: a bundled id (h100-sxm, ...) or a path to a profile file.
GpuProfile resolve_gpu(std::string_view argument, const std::filesystem::path& gpus_dir);

}  // namespace quantplan
