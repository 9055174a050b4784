#include "kernels/validation.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <numeric>
#include <ostream>
#include <sstream>

#include "core/base/error.h"
#include "kernels/bandwidth_probe.h"
#include "kernels/cuda_check.h"
#include "kernels/kv_cache.h"
#include "kernels/lt_gemm.h"
#include "kernels/reference.h"
#include "kernels/selftest.h"
#include "kernels/w4a16_reference.h"
#include "kernels/w8a8_gemm.h"
#include "kernels/w8a8_reference.h"

namespace quantplan::kernels {
namespace {

std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(v); }

// Drops a CUDA error left by a failed allocation so the next launch check does not report it.
void clear_last_error() { (void)cudaGetLastError(); }

template <typename T>
DeviceBuffer upload_vector(const std::vector<T>& v) {
    DeviceBuffer b(v.size() * sizeof(T));
    b.upload(v.data(), b.bytes());
    return b;
}

template <typename T>
std::vector<T> download_vector(const DeviceBuffer& b, std::size_t count) {
    std::vector<T> v(count);
    b.download(v.data(), count * sizeof(T));
    return v;
}

std::vector<std::uint16_t> random_half16(std::size_t count, Half16 type, float lo, float hi, Random& rng) {
    std::vector<std::uint16_t> v(count);
    for (auto& x : v) x = float_to_half16(rng.uniform(lo, hi), type);
    return v;
}

std::vector<float> to_float(const std::vector<std::uint16_t>& v, Half16 type) {
    std::vector<float> f(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) f[i] = half16_to_float(v[i], type);
    return f;
}

W4Logical random_w4(std::int64_t n, std::int64_t k, std::int64_t g, Half16 scale_type, bool zeros, Random& rng) {
    W4Logical w;
    w.n = n;
    w.k = k;
    w.group_size = g;
    w.scale_type = scale_type;
    w.q.resize(sz(n * k));
    for (auto& v : w.q) v = static_cast<std::uint8_t>(rng.below(16));
    w.scales.resize(sz(n * (k / g)));
    for (auto& s : w.scales) s = float_to_half16(rng.uniform(0.002f, 0.02f), scale_type);
    if (zeros) {
        w.zeros.resize(w.scales.size());
        for (auto& z : w.zeros) z = static_cast<std::uint8_t>(1 + rng.below(15));
    }
    return w;
}

const char* half_name(Half16 t) { return t == Half16::Bf16 ? "bf16" : "fp16"; }

const char* path_name(W4Path p) {
    switch (p) {
        case W4Path::Auto: return "auto";
        case W4Path::Gemv: return "gemv";
        case W4Path::TensorCore: return "tensor-core";
    }
    return "?";
}

std::string mnk(std::int64_t m, std::int64_t n, std::int64_t k) {
    return "M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k);
}

ValidationCheck from_comparison(const std::string& kernel, const std::string& shape, const Comparison& c, const std::string& tolerance) {
    ValidationCheck v;
    v.kernel = kernel;
    v.shape = shape;
    v.passed = c.passed();
    v.worst_ratio = c.failures == 0 ? c.worst_ratio : std::max(c.worst_ratio, 1.0);
    v.max_abs_error = c.max_abs_error;
    v.tolerance = tolerance;
    v.detail = c.describe();
    return v;
}

ValidationCheck failed(const std::string& kernel, const std::string& shape, const std::string& why) {
    ValidationCheck v;
    v.kernel = kernel;
    v.shape = shape;
    v.passed = false;
    v.worst_ratio = 1e30;
    v.detail = why;
    return v;
}

ValidationCheck skipped(const std::string& kernel, const std::string& shape, const std::string& why) {
    ValidationCheck v = failed(kernel, shape, "skipped: " + why);
    v.skipped = true;
    v.worst_ratio = 0;
    return v;
}

// Runs `body`; any exception becomes a failed check naming it.
ValidationCheck guarded(const std::string& kernel, const std::string& shape, const std::function<ValidationCheck()>& body) {
    try {
        return body();
    } catch (const std::exception& e) {
        clear_last_error();
        return failed(kernel, shape, std::string("error: ") + e.what());
    }
}

bool tensor_cores_for(Half16 act) { return w4a16_choose_path(64, act, current_compute_capability()) == W4Path::TensorCore; }

// Random weights for the W8A8 checks, quantized per channel on the host.
struct W8A8Data {
    std::vector<std::uint16_t> x;  // bf16 [M][K]
    std::vector<std::uint16_t> w;  // bf16 [N][K]
};

W8A8Data w8a8_data(std::int64_t m, std::int64_t n, std::int64_t k, std::uint64_t seed) {
    Random rng(seed);
    W8A8Data d;
    d.x = random_half16(sz(m * k), Half16::Bf16, -2.0f, 2.0f, rng);
    d.w = random_half16(sz(n * k), Half16::Bf16, -0.1f, 0.1f, rng);
    // An outlier column: per-token scales must follow it.
    for (std::int64_t i = 0; i < m; ++i) d.x[sz(i * k)] = float_to_bf16(20.0f);
    return d;
}

}  // namespace

bool find_device(DeviceInfo* info, std::string* why_not) {
    int count = 0;
    const cudaError_t st = cudaGetDeviceCount(&count);
    if (st == cudaErrorNoDevice || (st == cudaSuccess && count == 0)) {
        *why_not = "no CUDA device found";
        clear_last_error();
        return false;
    }
    if (st == cudaErrorInsufficientDriver) {
        *why_not = "the NVIDIA driver is missing or older than this build's CUDA runtime";
        clear_last_error();
        return false;
    }
    if (st != cudaSuccess) {
        *why_not = std::string("the CUDA runtime cannot enumerate devices (") + cudaGetErrorName(st) + ": " + cudaGetErrorString(st) + ")";
        clear_last_error();
        return false;
    }
    try {
        QP_CUDA_CHECK(cudaSetDevice(0));
        cudaDeviceProp prop{};
        QP_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
        DeviceInfo d;
        d.ordinal = 0;
        d.name = prop.name;
        d.compute_capability = prop.major * 10 + prop.minor;
        d.sm_count = prop.multiProcessorCount;
        d.memory_bytes = prop.totalGlobalMem;
        d.l2_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
        d.memory_bus_bits = prop.memoryBusWidth;
        int value = 0;
        if (cudaDeviceGetAttribute(&value, cudaDevAttrClockRate, 0) == cudaSuccess) d.sm_clock_khz = value;
        if (cudaDeviceGetAttribute(&value, cudaDevAttrMemoryClockRate, 0) == cudaSuccess) d.memory_clock_khz = value;
        if (cudaDeviceGetAttribute(&value, cudaDevAttrEccEnabled, 0) == cudaSuccess) d.ecc_enabled = value != 0;
        clear_last_error();
        int driver = 0, runtime = 0;
        if (cudaDriverGetVersion(&driver) == cudaSuccess)
            d.driver_version = std::to_string(driver / 1000) + "." + std::to_string((driver % 1000) / 10);
        if (cudaRuntimeGetVersion(&runtime) == cudaSuccess)
            d.runtime_version = std::to_string(runtime / 1000) + "." + std::to_string((runtime % 1000) / 10);
        *info = d;
        return true;
    } catch (const std::exception& e) {
        clear_last_error();
        *why_not = e.what();
        return false;
    }
}

// ---- Checks ----

ValidationCheck check_numeric_helpers() {
    return guarded("numeric_helpers", "bf16/fp16/e4m3 conversions", [] {
        Random rng(101);
        std::vector<float> in;
        for (int c = 0; c < 256; ++c) in.push_back(fp8_e4m3_to_float(static_cast<std::uint8_t>(c)));  // codes (NaN included)
        for (int c = 0; c < 0x7E; ++c)  // every E4M3 midpoint: the ties
            in.push_back(0.5f * (fp8_e4m3_to_float(static_cast<std::uint8_t>(c)) + fp8_e4m3_to_float(static_cast<std::uint8_t>(c + 1))));
        for (int i = 0; i < 1 << 20; ++i) {
            if (i % 2 == 0) {
                in.push_back(bits_float(static_cast<std::uint32_t>(rng.next())));
            } else {
                const float v = std::ldexp(rng.uniform(1.0f, 2.0f), static_cast<int>(rng.below(50)) - 30);
                in.push_back(rng.below(2) ? -v : v);
            }
        }
        for (const float s : {448.0f, 449.0f, 464.0f, 465.0f, 65504.0f, 65520.0f, 1e-30f, -0.0f, INFINITY, -INFINITY}) in.push_back(s);
        DeviceBuffer dev = upload_vector(in);
        CudaStream stream;
        const NumericSelftest r = numeric_selftest(dev.as<const float>(), static_cast<std::int64_t>(in.size()), stream.get());
        ValidationCheck v;
        v.kernel = "numeric_helpers";
        v.shape = std::to_string(in.size()) + " inputs, 256 E4M3 codes";
        v.passed = r.passed();
        v.tolerance = "exact";
        std::ostringstream d;
        const char* names[] = {"bf16", "fp16", "e4m3 encode", "e4m3 decode"};
        for (int i = 0; i < 4; ++i) {
            d << names[i] << " " << r.mismatches[static_cast<std::size_t>(i)] << " mismatches";
            if (r.first_mismatch[static_cast<std::size_t>(i)] >= 0)
                d << " (first input " << in[static_cast<std::size_t>(r.first_mismatch[static_cast<std::size_t>(i)])] << ")";
            d << (i < 3 ? "; " : "");
        }
        v.detail = d.str();
        v.worst_ratio = v.passed ? 0 : 2;
        return v;
    });
}

ValidationCheck check_w4a16(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t group, Half16 act, Half16 scale_type, bool zeros,
                            W4Path path, std::uint64_t seed) {
    const std::string shape = mnk(m, n, k) + " g" + std::to_string(group) + " " + half_name(act) + " act, " + half_name(scale_type) + " scales" +
                              (zeros ? ", zeros" : ", symmetric") + ", " + path_name(path);
    return guarded("w4a16_fused", shape, [&]() -> ValidationCheck {
        if (path == W4Path::TensorCore && !tensor_cores_for(act)) return skipped("w4a16_fused", shape, "no tensor-core kernel for this type here");
        Random rng(seed);
        const W4Packed p = pack_w4(random_w4(n, k, group, scale_type, zeros, rng));
        const std::vector<std::uint16_t> x = random_half16(sz(m * k), act, -1.0f, 1.0f, rng);
        const DenseResult ref = w4a16_gemm_reference(p, x, m, act);
        const W4DeviceBuffers wb = upload_w4(p);
        DeviceBuffer xb = upload_vector(x);
        DeviceBuffer yb(static_cast<std::uint64_t>(m * n) * 2);
        DeviceBuffer ws(w4a16_workspace_bytes(m, n));
        CudaStream s;
        w4a16_gemm(wb.view(), xb.as<const std::uint16_t>(), m, act, yb.as<std::uint16_t>(), ws.as<float>(), ws.bytes(), s.get(), path);
        s.synchronize();
        const Tolerance tol = w4a16_tolerance(k, act);
        return from_comparison("w4a16_fused", shape, compare_with_tolerance(to_float(download_vector<std::uint16_t>(yb, sz(m * n)), act), ref.value, ref.magnitude, tol),
                               tol.source);
    });
}

ValidationCheck check_w4a16_checkpoint(bool awq, bool act_order, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t group, Half16 act) {
    const std::string kernel = awq ? "w4a16_awq_repack" : (act_order ? "w4a16_gptq_act_order" : "w4a16_gptq_repack");
    const std::string shape = mnk(m, n, k) + " g" + std::to_string(group) + " " + half_name(act);
    return guarded(kernel, shape, [&]() -> ValidationCheck {
        Random rng(202 + (awq ? 1 : 0) + (act_order ? 2 : 0));
        const W4Logical w = random_w4(n, k, group, Half16::Fp16, true, rng);
        W4Packed p;
        std::vector<float> dense;
        if (awq) {
            const AwqTensors a = to_awq(w);
            p = repack_awq(a);
            dense = dequantize_awq(a);
        } else {
            GptqTensors t = to_gptq(w, true);
            if (act_order) {
                std::vector<std::int32_t> order(sz(k));
                std::iota(order.begin(), order.end(), 0);
                for (std::size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[rng.below(static_cast<std::uint32_t>(i + 1))]);
                for (std::int64_t j = 0; j < k; ++j) t.g_idx[sz(order[sz(j)])] = static_cast<std::int32_t>(j / group);
            }
            p = repack_gptq(t);
            dense = dequantize_gptq(t);
        }
        const std::vector<std::uint16_t> x = random_half16(sz(m * k), act, -1.0f, 1.0f, rng);
        const DenseResult ref = reference_matmul_nt(to_float(x, act), dense, m, n, k);
        const W4DeviceBuffers wb = upload_w4(p);
        DeviceBuffer xb = upload_vector(x);
        DeviceBuffer xp(static_cast<std::uint64_t>(m * k) * 2);
        DeviceBuffer yb(static_cast<std::uint64_t>(m * n) * 2);
        DeviceBuffer ws(w4a16_workspace_bytes(m, n));
        CudaStream s;
        const std::uint16_t* xin = xb.as<const std::uint16_t>();
        if (!p.k_perm.empty()) {
            w4a16_permute_activations(xin, wb.k_perm.as<const std::int32_t>(), m, k, xp.as<std::uint16_t>(), s.get());
            xin = xp.as<const std::uint16_t>();
        }
        w4a16_gemm(wb.view(), xin, m, act, yb.as<std::uint16_t>(), ws.as<float>(), ws.bytes(), s.get());
        s.synchronize();
        const Tolerance tol = w4a16_tolerance(k, act);
        return from_comparison(kernel, shape, compare_with_tolerance(to_float(download_vector<std::uint16_t>(yb, sz(m * n)), act), ref.value, ref.magnitude, tol),
                               tol.source);
    });
}

ValidationCheck check_w4a16_dequantize(std::int64_t n, std::int64_t k, std::int64_t group, bool zeros, Half16 out_type) {
    const std::string shape = "N=" + std::to_string(n) + " K=" + std::to_string(k) + " g" + std::to_string(group) + " -> " + half_name(out_type) +
                              (zeros ? ", zeros" : "");
    return guarded("w4a16_dequantize", shape, [&]() -> ValidationCheck {
        Random rng(303);
        const W4Packed p = pack_w4(random_w4(n, k, group, Half16::Bf16, zeros, rng));
        const W4DeviceBuffers wb = upload_w4(p);
        DeviceBuffer out(static_cast<std::uint64_t>(n * k) * 2);
        CudaStream s;
        w4a16_dequantize(wb.view(), out_type, out.as<std::uint16_t>(), s.get());
        s.synchronize();
        return from_comparison("w4a16_dequantize", shape,
                               compare_exact(download_vector<std::uint16_t>(out, sz(n * k)), w4a16_dequantize_reference(p, out_type)), "exact");
    });
}

ValidationCheck check_w4a16_generic(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t group, Half16 act) {
    const std::string shape = mnk(m, n, k) + " g" + std::to_string(group) + " " + half_name(act);
    return guarded("w4a16_generic", shape, [&]() -> ValidationCheck {
        Random rng(404);
        const W4Packed p = pack_w4(random_w4(n, k, group, Half16::Fp16, true, rng));
        const std::vector<std::uint16_t> x = random_half16(sz(m * k), act, -1.0f, 1.0f, rng);
        const DenseResult ref = w4a16_gemm_reference(p, x, m, act);
        const W4DeviceBuffers wb = upload_w4(p);
        DeviceBuffer xb = upload_vector(x);
        DeviceBuffer yb(static_cast<std::uint64_t>(m * n) * 2);
        DeviceBuffer scratch(static_cast<std::uint64_t>(n * k) * 2);
        LtGemm lt;
        CudaStream s;
        w4a16_generic_gemm(lt, wb.view(), xb.as<const std::uint16_t>(), m, act, yb.as<std::uint16_t>(), scratch.as<std::uint16_t>(), s.get());
        s.synchronize();
        const Tolerance tol = w4a16_tolerance(k, act);
        return from_comparison("w4a16_generic", shape,
                               compare_with_tolerance(to_float(download_vector<std::uint16_t>(yb, sz(m * n)), act), ref.value, ref.magnitude, tol), tol.source);
    });
}

ValidationCheck check_gemm_bf16(std::int64_t m, std::int64_t n, std::int64_t k) {
    const std::string shape = mnk(m, n, k);
    return guarded("gemm_bf16", shape, [&]() -> ValidationCheck {
        Random rng(505);
        const auto x = random_half16(sz(m * k), Half16::Bf16, -1.0f, 1.0f, rng);
        const auto w = random_half16(sz(n * k), Half16::Bf16, -0.1f, 0.1f, rng);
        const DenseResult ref = bf16_gemm_reference(x, w, m, n, k);
        DeviceBuffer xb = upload_vector(x), wb = upload_vector(w), yb(static_cast<std::uint64_t>(m * n) * 2);
        LtGemm lt;
        CudaStream s;
        lt.gemm_16bit(Half16::Bf16, xb.as<const std::uint16_t>(), wb.as<const std::uint16_t>(), yb.as<std::uint16_t>(), m, n, k, s.get());
        s.synchronize();
        const Tolerance tol = bf16_gemm_tolerance(k);
        return from_comparison("gemm_bf16", shape,
                               compare_with_tolerance(to_float(download_vector<std::uint16_t>(yb, sz(m * n)), Half16::Bf16), ref.value, ref.magnitude, tol),
                               tol.source);
    });
}

ValidationCheck check_quantize_rows(bool fp8, std::int64_t rows, std::int64_t cols, Half16 type) {
    const std::string kernel = fp8 ? "quantize_rows_fp8" : "quantize_rows_int8";
    const std::string shape = std::to_string(rows) + " x " + std::to_string(cols) + " " + half_name(type);
    return guarded(kernel, shape, [&]() -> ValidationCheck {
        Random rng(606);
        std::vector<std::uint16_t> x = random_half16(sz(rows * cols), type, -3.0f, 3.0f, rng);
        for (std::int64_t c = 0; c < cols; ++c) x[sz(c)] = 0;  // an all-zero row: scale 1
        if (rows > 1) x[sz(cols + cols / 2)] = float_to_half16(-1000.0f, type);  // an outlier sets its row's scale
        DeviceBuffer xb = upload_vector(x), qb(static_cast<std::uint64_t>(rows * cols)), sb(static_cast<std::uint64_t>(rows) * 4);
        CudaStream s;
        std::vector<std::uint8_t> expected_q;
        std::vector<float> expected_s;
        if (fp8) {
            quantize_rows_fp8(xb.as<const std::uint16_t>(), type, rows, cols, qb.as<std::uint8_t>(), sb.as<float>(), s.get());
            const Fp8Rows r = quantize_rows_fp8_reference(x, type, rows, cols);
            expected_q = r.q;
            expected_s = r.scales;
        } else {
            quantize_rows_int8(xb.as<const std::uint16_t>(), type, rows, cols, qb.as<std::int8_t>(), sb.as<float>(), s.get());
            const Int8Rows r = quantize_rows_int8_reference(x, type, rows, cols);
            expected_q.assign(r.q.size(), 0);
            for (std::size_t i = 0; i < r.q.size(); ++i) expected_q[i] = static_cast<std::uint8_t>(r.q[i]);
            expected_s = r.scales;
        }
        s.synchronize();
        const Comparison cq = compare_exact(download_vector<std::uint8_t>(qb, sz(rows * cols)), expected_q);
        const Comparison cs = compare_exact(download_vector<float>(sb, sz(rows)), expected_s);
        ValidationCheck v = from_comparison(kernel, shape, cq.passed() ? cs : cq, "exact");
        if (!cs.passed()) v.detail = "scales: " + cs.describe();
        return v;
    });
}

ValidationCheck check_w8a8_int8(std::int64_t m, std::int64_t n, std::int64_t k) {
    const std::string shape = mnk(m, n, k);
    return guarded("w8a8_int8", shape, [&]() -> ValidationCheck {
        const W8A8Data d = w8a8_data(m, n, k, 707);
        const Int8Rows wq = quantize_rows_int8_reference(d.w, Half16::Bf16, n, k);
        const std::vector<std::uint16_t> expected = int8_gemm_reference(quantize_rows_int8_reference(d.x, Half16::Bf16, m, k), wq);
        DeviceBuffer xb = upload_vector(d.x), wqb = upload_vector(wq.q), wsb = upload_vector(wq.scales);
        DeviceBuffer yb(static_cast<std::uint64_t>(m * n) * 2);
        const auto [xq_bytes, xs_bytes, acc_bytes] = w8a8_scratch_bytes(m, n, k);
        DeviceBuffer xq(xq_bytes), xs(xs_bytes), acc(acc_bytes);
        LtGemm lt;
        CudaStream s;
        w8a8_int8_gemm(lt, xb.as<const std::uint16_t>(), Half16::Bf16, m, wqb.as<const std::int8_t>(), wsb.as<const float>(), n, k,
                       yb.as<std::uint16_t>(), W8A8Scratch{xq.get(), xs.as<float>(), acc.get()}, s.get());
        s.synchronize();
        return from_comparison("w8a8_int8", shape, compare_exact(download_vector<std::uint16_t>(yb, sz(m * n)), expected), "exact");
    });
}

ValidationCheck check_w8a8_fp8(std::int64_t m, std::int64_t n, std::int64_t k) {
    const std::string shape = mnk(m, n, k);
    return guarded("w8a8_fp8", shape, [&]() -> ValidationCheck {
        const int cc = current_compute_capability();
        if (cc < 89) return skipped("w8a8_fp8", shape, "FP8 tensor cores need sm_89, this device is sm_" + std::to_string(cc));
        const W8A8Data d = w8a8_data(m, n, k, 808);
        const Fp8Rows wq = quantize_rows_fp8_reference(d.w, Half16::Bf16, n, k);
        const DenseResult ref = fp8_gemm_reference(quantize_rows_fp8_reference(d.x, Half16::Bf16, m, k), wq);
        DeviceBuffer xb = upload_vector(d.x), wqb = upload_vector(wq.q), wsb = upload_vector(wq.scales);
        DeviceBuffer yb(static_cast<std::uint64_t>(m * n) * 2);
        const auto [xq_bytes, xs_bytes, acc_bytes] = w8a8_scratch_bytes(m, n, k);
        DeviceBuffer xq(xq_bytes), xs(xs_bytes), acc(acc_bytes);
        LtGemm lt;
        CudaStream s;
        w8a8_fp8_gemm(lt, xb.as<const std::uint16_t>(), Half16::Bf16, m, wqb.as<const std::uint8_t>(), wsb.as<const float>(), n, k,
                      yb.as<std::uint16_t>(), W8A8Scratch{xq.get(), xs.as<float>(), acc.get()}, s.get());
        s.synchronize();
        const Tolerance tol = fp8_gemm_tolerance(k);
        ValidationCheck v = from_comparison(
            "w8a8_fp8", shape, compare_with_tolerance(to_float(download_vector<std::uint16_t>(yb, sz(m * n)), Half16::Bf16), ref.value, ref.magnitude, tol),
            tol.source);
        v.shape += fp8_uses_outer_vector_scales(cc) ? " (cuBLASLt outer-vector scales)" : " (own epilogue)";
        return v;
    });
}

namespace {

// A device copy of a host cache (same bytes).
struct DeviceCache {
    DeviceBuffer k, v, k_scales, v_scales;
    KvCacheView view;
};

DeviceCache upload_cache(const KvCacheHost& c) {
    DeviceCache d;
    d.k = upload_vector(c.k);
    d.v = upload_vector(c.v);
    d.view.type = c.type;
    d.view.k = d.k.get();
    d.view.v = d.v.get();
    if (c.type == KvCacheType::Int8) {
        d.k_scales = upload_vector(c.k_scales);
        d.v_scales = upload_vector(c.v_scales);
        d.view.k_scales = d.k_scales.as<std::uint16_t>();
        d.view.v_scales = d.v_scales.as<std::uint16_t>();
    }
    d.view.k_scale = c.k_scale;
    d.view.v_scale = c.v_scale;
    d.view.batch = c.batch;
    d.view.max_tokens = c.max_tokens;
    d.view.kv_heads = c.kv_heads;
    d.view.head_dim = c.head_dim;
    return d;
}

}  // namespace

ValidationCheck check_kv_write(KvCacheType type, std::int64_t batch, std::int64_t kv_heads, std::int64_t head_dim) {
    const std::string kernel = std::string("kv_write_") + kv_cache_type_name(type);
    const std::string shape = "B=" + std::to_string(batch) + " H_kv=" + std::to_string(kv_heads) + " D=" + std::to_string(head_dim);
    return guarded(kernel, shape, [&]() -> ValidationCheck {
        const std::int64_t tokens = 7;
        KvCacheHost host = make_kv_cache_host(type, batch, tokens, kv_heads, head_dim, 0.5f, 0.25f);
        DeviceCache dev = upload_cache(host);
        CudaStream s;
        Random rng(909);
        for (int step = 0; step < 2; ++step) {
            const auto k_new = random_half16(sz(batch * kv_heads * head_dim), Half16::Bf16, -200.0f, 200.0f, rng);  // beyond 448 x 0.5 saturates
            const auto v_new = random_half16(sz(batch * kv_heads * head_dim), Half16::Bf16, -1.0f, 1.0f, rng);
            std::vector<std::int32_t> pos(sz(batch));
            for (std::int64_t b = 0; b < batch; ++b) pos[sz(b)] = static_cast<std::int32_t>((b * 3 + step * 5) % tokens);
            kv_cache_write_reference(host, k_new, v_new, pos);
            DeviceBuffer kb = upload_vector(k_new), vb = upload_vector(v_new), pb = upload_vector(pos);
            kv_cache_write(dev.view, kb.as<const std::uint16_t>(), vb.as<const std::uint16_t>(), pb.as<const std::int32_t>(), s.get());
            s.synchronize();
        }
        Comparison c = compare_exact(download_vector<std::uint8_t>(dev.k, host.k.size()), host.k);
        if (c.passed()) c = compare_exact(download_vector<std::uint8_t>(dev.v, host.v.size()), host.v);
        if (c.passed() && type == KvCacheType::Int8) c = compare_exact(download_vector<std::uint16_t>(dev.k_scales, host.k_scales.size()), host.k_scales);
        if (c.passed() && type == KvCacheType::Int8) c = compare_exact(download_vector<std::uint16_t>(dev.v_scales, host.v_scales.size()), host.v_scales);
        return from_comparison(kernel, shape, c, "exact");
    });
}

ValidationCheck check_decode_attention(KvCacheType type, std::int64_t q_heads, std::int64_t kv_heads, std::int64_t head_dim,
                                       const std::vector<std::int32_t>& seq_lens, std::uint64_t seed) {
    const std::string kernel = std::string("attention_") + kv_cache_type_name(type);
    std::string lens;
    for (const std::int32_t l : seq_lens) lens += (lens.empty() ? "" : ",") + std::to_string(l);
    const std::string shape = "H_q=" + std::to_string(q_heads) + " H_kv=" + std::to_string(kv_heads) + " D=" + std::to_string(head_dim) + " lens " + lens;
    return guarded(kernel, shape, [&]() -> ValidationCheck {
        const auto batch = static_cast<std::int64_t>(seq_lens.size());
        const std::int64_t max_len = *std::max_element(seq_lens.begin(), seq_lens.end());
        const std::int64_t capacity = max_len + 3;
        KvCacheHost host = make_kv_cache_host(type, batch, capacity, kv_heads, head_dim, 0.02f, 0.01f);
        Random rng(seed);
        for (std::int64_t t = 0; t < capacity; ++t) {
            const auto k_new = random_half16(sz(batch * kv_heads * head_dim), Half16::Bf16, -3.0f, 3.0f, rng);
            const auto v_new = random_half16(sz(batch * kv_heads * head_dim), Half16::Bf16, -1.0f, 1.0f, rng);
            kv_cache_write_reference(host, k_new, v_new, std::vector<std::int32_t>(sz(batch), static_cast<std::int32_t>(t)));
        }
        const auto q = random_half16(sz(batch * q_heads * head_dim), Half16::Bf16, -1.0f, 1.0f, rng);
        const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
        const std::vector<double> ref = decode_attention_reference(host, q, q_heads, seq_lens, scale);
        const Tolerance tol = decode_attention_tolerance(kv_cache_max_abs_value(host, seq_lens));
        DeviceCache dev = upload_cache(host);
        DeviceBuffer qb = upload_vector(q), lb = upload_vector(seq_lens), ob(static_cast<std::uint64_t>(batch * q_heads * head_dim) * 2);
        DeviceBuffer ws(decode_attention_workspace_bytes(dev.view, q_heads, max_len));
        CudaStream s;
        decode_attention(dev.view, qb.as<const std::uint16_t>(), q_heads, lb.as<const std::int32_t>(), max_len, scale, ws.as<float>(), ws.bytes(),
                         ob.as<std::uint16_t>(), s.get());
        s.synchronize();
        ValidationCheck v = from_comparison(
            kernel, shape, compare_with_tolerance(to_float(download_vector<std::uint16_t>(ob, ref.size()), Half16::Bf16), ref, {}, tol), tol.source);
        v.shape += ws.bytes() > 0 ? " (split over the context)" : "";
        return v;
    });
}

ValidationCheck check_probe() {
    return guarded("probe", "copy and triad over 4 MiB", []() -> ValidationCheck {
        const std::uint64_t bytes = 4ull << 20;
        const std::size_t count = bytes / 4;
        Random rng(1010);
        std::vector<float> b(count), c(count);
        for (std::size_t i = 0; i < count; ++i) {
            b[i] = rng.uniform(-1, 1);
            c[i] = rng.uniform(-1, 1);
        }
        DeviceBuffer bb = upload_vector(b), cb = upload_vector(c), ab(bytes), copy(bytes), sink(4);
        CudaStream s;
        probe_copy(copy.get(), bb.get(), bytes, s.get());
        probe_triad(ab.as<float>(), bb.as<const float>(), cb.as<const float>(), 3.0f, bytes, s.get());
        probe_read(bb.get(), bytes, sink.as<std::uint32_t>(), s.get());
        s.synchronize();
        Comparison cc = compare_exact(download_vector<float>(copy, count), b);
        if (!cc.passed()) return from_comparison("probe", "copy over 4 MiB", cc, "exact");
        std::vector<double> expected(count);
        for (std::size_t i = 0; i < count; ++i) expected[i] = static_cast<double>(b[i]) + 3.0 * static_cast<double>(c[i]);
        Tolerance t;
        t.relative = 0;
        t.absolute = 4.0 * kUnitRoundoffFp32 * 4.0;  // |b + 3c| <= 4: one or two fp32 roundings
        t.source = "fp32 rounding of b + 3c (fused or not)";
        return from_comparison("probe", "triad over 4 MiB", compare_with_tolerance(download_vector<float>(ab, count), expected, {}, t), t.source);
    });
}

std::vector<ValidationCheck> run_correctness_checks(std::ostream& log) {
    std::vector<ValidationCheck> out;
    const auto add = [&](ValidationCheck c) {
        log << (c.skipped ? "  SKIP " : c.passed ? "  PASS " : "  FAIL ") << c.kernel << " [" << c.shape << "]: " << c.detail << "\n";
        out.push_back(std::move(c));
    };
    add(check_numeric_helpers());
    add(check_probe());
    // Fused W4A16: decode rows on both paths, tile and alignment edges (M 1, 3-5, 16, 17, 67; N not a
    // multiple of 64; K = 32 x odd), every group size, both scale formats, zero points or not.
    for (const Half16 act : {Half16::Bf16, Half16::Fp16}) {
        add(check_w4a16(1, 72, 256, 128, act, Half16::Fp16, false, W4Path::Gemv, 1));
        add(check_w4a16(3, 72, 256, 32, act, Half16::Bf16, true, W4Path::Gemv, 2));
        add(check_w4a16(4, 200, 512, 64, act, Half16::Fp16, true, W4Path::Gemv, 3));
        add(check_w4a16(5, 72, 256, 128, act, Half16::Fp16, false, W4Path::Gemv, 4));
        add(check_w4a16(1, 72, 96, 32, act, Half16::Fp16, true, W4Path::Auto, 5));
        add(check_w4a16(1, 1032, 4096, 128, act, Half16::Fp16, false, W4Path::Auto, 6));
        add(check_w4a16(5, 72, 256, 128, act, Half16::Fp16, true, W4Path::TensorCore, 7));
        add(check_w4a16(16, 136, 512, 64, act, Half16::Bf16, false, W4Path::TensorCore, 8));
        add(check_w4a16(17, 136, 512, 128, act, Half16::Fp16, true, W4Path::TensorCore, 9));
        add(check_w4a16(67, 200, 1024, 32, act, Half16::Bf16, true, W4Path::TensorCore, 10));
        add(check_w4a16(300, 64, 256, 128, act, Half16::Fp16, false, W4Path::TensorCore, 11));
        add(check_w4a16(1, 72, 256, 128, act, Half16::Fp16, true, W4Path::TensorCore, 12));
        // An odd number of K steps per block (5, 7): the 16-row kernel's two-step loop ends half-way.
        add(check_w4a16(16, 72, 320, 64, act, Half16::Bf16, true, W4Path::TensorCore, 13));
        add(check_w4a16(9, 200, 448, 64, act, Half16::Fp16, false, W4Path::TensorCore, 14));
        // Few output channels and long rows: the GEMV splits a row over 4 and 8 warps (on 132 SMs).
        add(check_w4a16(1, 72, 8192, 128, act, Half16::Fp16, true, W4Path::Gemv, 15));
        add(check_w4a16(1, 72, 16384, 64, act, Half16::Bf16, false, W4Path::Gemv, 16));
        // Split K with an odd number of steps per split (22 steps: 5 per split, the last 2).
        add(check_w4a16(16, 72, 1408, 64, act, Half16::Bf16, true, W4Path::TensorCore, 17));
    }
    add(check_w4a16_checkpoint(true, false, 3, 136, 512, 128, Half16::Bf16));
    add(check_w4a16_checkpoint(false, false, 9, 136, 512, 64, Half16::Fp16));
    add(check_w4a16_checkpoint(false, true, 1, 136, 512, 128, Half16::Bf16));
    add(check_w4a16_checkpoint(false, true, 20, 72, 256, 32, Half16::Bf16));
    add(check_w4a16_dequantize(72, 256, 64, true, Half16::Bf16));
    add(check_w4a16_dequantize(40, 96, 32, false, Half16::Fp16));
    add(check_w4a16_generic(5, 136, 512, 128, Half16::Bf16));
    add(check_w4a16_generic(64, 72, 256, 32, Half16::Fp16));
    add(check_gemm_bf16(1, 136, 512));
    add(check_gemm_bf16(33, 72, 1024));
    add(check_gemm_bf16(128, 264, 256));
    add(check_quantize_rows(false, 5, 1000, Half16::Bf16));
    add(check_quantize_rows(false, 3, 4096, Half16::Fp16));
    add(check_quantize_rows(true, 5, 1000, Half16::Bf16));
    add(check_quantize_rows(true, 2, 4097, Half16::Fp16));
    add(check_quantize_rows(true, 2, 12288, Half16::Bf16));  // the large-row vector kernel
    add(check_w8a8_int8(1, 136, 512));
    add(check_w8a8_int8(37, 72, 1024));
    add(check_w8a8_int8(32, 72, 512));  // no padding rows
    add(check_w8a8_fp8(1, 144, 512));
    add(check_w8a8_fp8(37, 80, 1024));
    add(check_w8a8_fp8(32, 80, 512));  // no padding rows: sm_90 writes y directly
    for (const KvCacheType t : {KvCacheType::Bf16, KvCacheType::Fp8E4M3, KvCacheType::Int8}) {
        add(check_kv_write(t, 3, 2, 128));
        add(check_kv_write(t, 2, 4, 64));
        add(check_decode_attention(t, 8, 2, 128, {1, 33, 300}, 11));
        add(check_decode_attention(t, 4, 4, 64, {129, 2}, 12));
        add(check_decode_attention(t, 8, 1, 128, {5000}, 13));
        add(check_decode_attention(t, 16, 2, 64, {700, 37}, 14));  // 8 query heads per KV head at D = 64
        add(check_decode_attention(t, 6, 2, 128, {300}, 15));      // 3 per KV head: the 4-head kernel, one unused
    }
    return out;
}

// ---- Timing ----

namespace {

// Bytes the timer's L2 flush reads: 4 x L2 (at least 128 MiB), a multiple of 16. Reading 2 x L2
// evicts everything only under LRU replacement; under a replacement policy closer to random,
// a line survives n x L2 of new lines with probability about e^-n (14 % at 2 x, 2 % at 4 x).
std::uint64_t l2_flush_bytes(const DeviceInfo& device) { return std::max<std::uint64_t>(4 * device.l2_bytes, 128ull << 20) / 16 * 16; }

// Times launches: warm-up, then per repeat an L2 flush, a start event, the launch, a stop event;
// the median of the repeats. The flush (outside the timed window) reads a buffer filled once at
// construction with normally cached loads (l2_flush_read): a memset would evict the operands too,
// but it leaves up to an L2 of dirty lines whose write-back to DRAM lands inside the next timed
// window and slows the kernel being measured.
class Timer {
public:
    Timer(const DeviceInfo& device, int warmup, int repeats)
        : flush_(l2_flush_bytes(device)), sink_(16), warmup_(std::max(0, warmup)), repeats_(std::max(1, repeats)) {
        CudaStream s;
        fill_pattern(flush_.get(), flush_.bytes(), 0x5EED, s.get());
        s.synchronize();
        starts_.reserve(static_cast<std::size_t>(repeats_));
        stops_.reserve(static_cast<std::size_t>(repeats_));
        for (int i = 0; i < repeats_; ++i) {
            starts_.emplace_back();
            stops_.emplace_back();
        }
    }

    double median_s(cudaStream_t stream, const std::function<void()>& launch) {
        for (int i = 0; i < warmup_; ++i) launch();
        for (int i = 0; i < repeats_; ++i) {
            l2_flush_read(flush_.get(), flush_.bytes(), sink_.as<std::uint32_t>(), stream);
            starts_[static_cast<std::size_t>(i)].record(stream);
            launch();
            stops_[static_cast<std::size_t>(i)].record(stream);
        }
        QP_CUDA_CHECK(cudaStreamSynchronize(stream));
        std::vector<double> t(static_cast<std::size_t>(repeats_));
        for (int i = 0; i < repeats_; ++i) t[static_cast<std::size_t>(i)] = stops_[static_cast<std::size_t>(i)].seconds_since(starts_[static_cast<std::size_t>(i)]);
        std::sort(t.begin(), t.end());
        const std::size_t mid = t.size() / 2;
        return t.size() % 2 ? t[mid] : 0.5 * (t[mid - 1] + t[mid]);
    }

private:
    DeviceBuffer flush_;  // read-only after construction
    DeviceBuffer sink_;   // l2_flush_read's sink (written only on an impossible fold)
    int warmup_;
    int repeats_;
    std::vector<CudaEvent> starts_;
    std::vector<CudaEvent> stops_;
};

using Clock = std::chrono::steady_clock;

std::uint64_t free_memory_bytes() {
    std::size_t free_b = 0, total_b = 0;
    QP_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    return free_b;
}

std::uint64_t u64(std::int64_t v) { return static_cast<std::uint64_t>(v); }

// Everything one GEMM shape needs on the device, at its largest batch.
struct GemmBuffers {
    DeviceBuffer w_bf16, w4_q, w4_scales, w8_q, w8_scales, f8_q, f8_scales, generic_scratch, x, y, w4_ws, xq, xs, acc;
};

void time_gemm_shape(const ValidationConfig& c, const GemmShapeSpec& shape, const DeviceInfo& device, Timer& timer, LtGemm& lt, CudaStream& s,
                     Clock::time_point deadline, bool time_dequantize, std::vector<ValidationTiming>* out, std::vector<std::string>* notes,
                     std::ostream& log) {
    const std::int64_t n = shape.n, k = shape.k, g = c.group_size;
    const std::int64_t m_max = *std::max_element(c.batches.begin(), c.batches.end());
    const bool fp8 = device.compute_capability >= 89;
    GemmBuffers b;
    try {
        b.w_bf16 = DeviceBuffer(u64(n * k) * 2);
        b.w4_q = DeviceBuffer(u64(n * k) / 2);
        b.w4_scales = DeviceBuffer(u64(n * (k / g)) * 2);
        b.w8_q = DeviceBuffer(u64(n * k));
        b.w8_scales = DeviceBuffer(u64(n) * 4);
        if (fp8) {
            b.f8_q = DeviceBuffer(u64(n * k));
            b.f8_scales = DeviceBuffer(u64(n) * 4);
        }
        b.generic_scratch = DeviceBuffer(u64(n * k) * 2);
        b.x = DeviceBuffer(u64(m_max * k) * 2);
        b.y = DeviceBuffer(u64(m_max * n) * 2);
        b.w4_ws = DeviceBuffer(w4a16_workspace_bytes(std::min<std::int64_t>(m_max, 256), n));
        const auto [xq_b, xs_b, acc_b] = w8a8_scratch_bytes(m_max, n, k);
        b.xq = DeviceBuffer(xq_b);
        b.xs = DeviceBuffer(xs_b);
        b.acc = DeviceBuffer(acc_b);
    } catch (const std::exception& e) {
        clear_last_error();
        notes->push_back("shape " + shape.label + " skipped: " + e.what());
        return;
    }
    fill_uniform_half16(b.w_bf16.as<std::uint16_t>(), n * k, true, -0.05f, 0.05f, 1, s.get());
    fill_pattern(b.w4_q.get(), b.w4_q.bytes(), 2, s.get());
    fill_uniform_half16(b.w4_scales.as<std::uint16_t>(), n * (k / g), false, 0.001f, 0.01f, 3, s.get());
    fill_uniform_half16(b.x.as<std::uint16_t>(), m_max * k, c.act_type == Half16::Bf16, -1.0f, 1.0f, 4, s.get());
    quantize_rows_int8(b.w_bf16.as<const std::uint16_t>(), Half16::Bf16, n, k, b.w8_q.as<std::int8_t>(), b.w8_scales.as<float>(), s.get());
    if (fp8) quantize_rows_fp8(b.w_bf16.as<const std::uint16_t>(), Half16::Bf16, n, k, b.f8_q.as<std::uint8_t>(), b.f8_scales.as<float>(), s.get());
    s.synchronize();

    W4DeviceWeights w4;
    w4.qweight = b.w4_q.as<const std::uint32_t>();
    w4.scales = b.w4_scales.as<const std::uint16_t>();
    w4.n = n;
    w4.k = k;
    w4.group_size = g;
    w4.scale_type = Half16::Fp16;
    const W8A8Scratch scratch{b.xq.get(), b.xs.as<float>(), b.acc.get()};
    const std::uint16_t* x = b.x.as<const std::uint16_t>();
    std::uint16_t* y = b.y.as<std::uint16_t>();
    const Half16 act = c.act_type;

    for (const std::int64_t m : c.batches) {
        if (Clock::now() > deadline) {
            notes->push_back("time budget reached: shape " + shape.label + " from M=" + std::to_string(m) + " not timed");
            return;
        }
        const double flop = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
        const std::uint64_t act_bytes = 2 * u64(m * k) + 2 * u64(m * n);
        struct Case {
            const char* kernel;
            std::uint64_t bytes;
            std::function<void()> launch;
        };
        std::vector<Case> cases{
            {"gemm_bf16", 2 * u64(n * k) + act_bytes, [&] { lt.gemm_16bit(act, x, b.w_bf16.as<const std::uint16_t>(), y, m, n, k, s.get()); }},
            {"w4a16_fused", u64(n * k) / 2 + 2 * u64(n * (k / g)) + act_bytes,
             [&] { w4a16_gemm(w4, x, m, act, y, b.w4_ws.as<float>(), b.w4_ws.bytes(), s.get()); }},
            {"w4a16_generic", u64(n * k) / 2 + 2 * u64(n * (k / g)) + act_bytes,
             [&] { w4a16_generic_gemm(lt, w4, x, m, act, y, b.generic_scratch.as<std::uint16_t>(), s.get()); }},
            {"w8a8_int8", u64(n * k) + 4 * u64(n) + act_bytes,
             [&] { w8a8_int8_gemm(lt, x, act, m, b.w8_q.as<const std::int8_t>(), b.w8_scales.as<const float>(), n, k, y, scratch, s.get()); }},
        };
        if (fp8)
            cases.push_back({"w8a8_fp8", u64(n * k) + 4 * u64(n) + act_bytes,
                             [&] { w8a8_fp8_gemm(lt, x, act, m, b.f8_q.as<const std::uint8_t>(), b.f8_scales.as<const float>(), n, k, y, scratch, s.get()); }});
        for (const Case& cs : cases) {
            try {
                ValidationTiming t;
                t.kernel = cs.kernel;
                t.shape = shape.label;
                t.batch = m;
                t.n = n;
                t.k = k;
                t.bytes = cs.bytes;
                t.flop = flop;
                t.time_s = timer.median_s(s.get(), cs.launch);
                out->push_back(t);
            } catch (const std::exception& e) {
                clear_last_error();
                notes->push_back(std::string(cs.kernel) + " " + shape.label + " M=" + std::to_string(m) + " not timed: " + e.what());
            }
        }
        log << "  timed " << shape.label << " (" << n << " x " << k << ") M=" << m << "\n";
    }
    // The dequantize kernel alone (the generic path's first half), once per shape.
    if (!time_dequantize) return;
    try {
        ValidationTiming t;
        t.kernel = "w4a16_dequantize";
        t.shape = shape.label;
        t.n = n;
        t.k = k;
        t.bytes = u64(n * k) / 2 + 2 * u64(n * (k / g)) + 2 * u64(n * k);
        t.time_s = timer.median_s(s.get(), [&] { w4a16_dequantize(w4, act, b.generic_scratch.as<std::uint16_t>(), s.get()); });
        out->push_back(t);
    } catch (const std::exception& e) {
        clear_last_error();
        notes->push_back("w4a16_dequantize " + shape.label + " not timed: " + e.what());
    }
}

void time_attention(const ValidationConfig& c, Timer& timer, CudaStream& s, Clock::time_point deadline, std::vector<ValidationTiming>* out,
                    std::vector<std::string>* notes, std::ostream& log) {
    if (c.q_heads <= 0 || c.kv_heads <= 0) return;
    bool dim_ok = false;
    for (const std::int64_t d : kKvHeadDims) dim_ok = dim_ok || d == c.head_dim;
    if (!dim_ok || c.q_heads % c.kv_heads != 0 || c.q_heads / c.kv_heads > kMaxQueryGroup) {
        notes->push_back("attention not timed: head_dim " + std::to_string(c.head_dim) + " or " + std::to_string(c.q_heads) + "/" +
                         std::to_string(c.kv_heads) + " heads not supported by the bundled kernel");
        return;
    }
    const std::int64_t hq = c.q_heads, hkv = c.kv_heads, d = c.head_dim;
    for (const std::int64_t ctx : c.contexts) {
        for (const std::int64_t batch : c.attention_batches) {
            for (const KvCacheType type : {KvCacheType::Bf16, KvCacheType::Fp8E4M3, KvCacheType::Int8}) {
                const std::string kernel = std::string("attention_") + kv_cache_type_name(type);
                const std::string label = "ctx" + std::to_string(ctx);
                if (Clock::now() > deadline) {
                    notes->push_back("time budget reached: " + kernel + " " + label + " B=" + std::to_string(batch) + " not timed");
                    continue;
                }
                const std::uint64_t elems = u64(batch * ctx * hkv * d);
                const std::uint64_t cache_bytes = 2 * elems * u64(kv_element_bytes(type));
                try {
                    if (cache_bytes > free_memory_bytes() / 3) throw Error("attention", "cache of " + std::to_string(cache_bytes) + " bytes does not fit comfortably");
                    KvCacheView view;
                    view.type = type;
                    view.batch = batch;
                    view.max_tokens = ctx;
                    view.kv_heads = hkv;
                    view.head_dim = d;
                    DeviceBuffer kb(cache_bytes / 2), vb(cache_bytes / 2), ks, vs;
                    view.k = kb.get();
                    view.v = vb.get();
                    if (type == KvCacheType::Bf16) {
                        fill_uniform_half16(kb.as<std::uint16_t>(), static_cast<std::int64_t>(elems), true, -1.0f, 1.0f, 5, s.get());
                        fill_uniform_half16(vb.as<std::uint16_t>(), static_cast<std::int64_t>(elems), true, -1.0f, 1.0f, 6, s.get());
                    } else {
                        const std::uint8_t mask = type == KvCacheType::Fp8E4M3 ? 0xBF : 0xFF;
                        fill_masked_bytes(kb.as<std::uint8_t>(), static_cast<std::int64_t>(elems), mask, 5, s.get());
                        fill_masked_bytes(vb.as<std::uint8_t>(), static_cast<std::int64_t>(elems), mask, 6, s.get());
                    }
                    std::uint64_t scale_bytes = 0;
                    if (type == KvCacheType::Int8) {
                        scale_bytes = 2 * u64(batch * ctx * hkv) * 2;
                        ks = DeviceBuffer(scale_bytes / 2);
                        vs = DeviceBuffer(scale_bytes / 2);
                        fill_uniform_half16(ks.as<std::uint16_t>(), batch * ctx * hkv, false, 0.001f, 0.01f, 7, s.get());
                        fill_uniform_half16(vs.as<std::uint16_t>(), batch * ctx * hkv, false, 0.001f, 0.01f, 8, s.get());
                        view.k_scales = ks.as<std::uint16_t>();
                        view.v_scales = vs.as<std::uint16_t>();
                    }
                    if (type == KvCacheType::Fp8E4M3) {
                        view.k_scale = 0.5f;
                        view.v_scale = 0.5f;
                    }
                    DeviceBuffer qb(u64(batch * hq * d) * 2), ob(u64(batch * hq * d) * 2);
                    fill_uniform_half16(qb.as<std::uint16_t>(), batch * hq * d, true, -1.0f, 1.0f, 9, s.get());
                    DeviceBuffer lens = upload_vector(std::vector<std::int32_t>(sz(batch), static_cast<std::int32_t>(ctx)));
                    DeviceBuffer ws(decode_attention_workspace_bytes(view, hq, ctx));
                    s.synchronize();
                    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
                    ValidationTiming t;
                    t.kernel = kernel;
                    t.shape = label;
                    t.batch = batch;
                    t.context_tokens = ctx;
                    t.bytes = cache_bytes + scale_bytes + 2 * u64(batch * hq * d) * 2;
                    t.flop = 4.0 * static_cast<double>(batch) * static_cast<double>(ctx) * static_cast<double>(hq) * static_cast<double>(d);
                    t.time_s = timer.median_s(s.get(), [&] {
                        decode_attention(view, qb.as<const std::uint16_t>(), hq, lens.as<const std::int32_t>(), ctx, scale, ws.as<float>(), ws.bytes(),
                                         ob.as<std::uint16_t>(), s.get());
                    });
                    out->push_back(t);
                } catch (const std::exception& e) {
                    clear_last_error();
                    notes->push_back(kernel + " " + label + " B=" + std::to_string(batch) + " not timed: " + e.what());
                }
            }
            log << "  timed attention ctx=" << ctx << " B=" << batch << "\n";
        }
    }
}

}  // namespace

ProbeResult run_bandwidth_probe(const DeviceInfo& device, int repeats, std::vector<ValidationTiming>* timings, std::ostream& log) {
    ProbeResult r;
    // At least 8 x L2 (kernels.md (e), A18), 1 GiB when a fifth of the free memory allows.
    const std::uint64_t floor_bytes = std::max<std::uint64_t>(8 * device.l2_bytes, 256ull << 20);
    std::uint64_t bytes = std::max<std::uint64_t>(floor_bytes, std::min<std::uint64_t>(1ull << 30, free_memory_bytes() / 5));
    bytes = bytes / 16 * 16;
    r.buffer_bytes = bytes;
    DeviceBuffer a(bytes), b(bytes), c(bytes), sink(16);
    CudaStream s;
    fill_pattern(b.get(), bytes, 11, s.get());
    fill_pattern(c.get(), bytes, 12, s.get());
    s.synchronize();
    Timer timer(device, 2, repeats);
    const double t_read = timer.median_s(s.get(), [&] { probe_read(b.get(), bytes, sink.as<std::uint32_t>(), s.get()); });
    const double t_copy = timer.median_s(s.get(), [&] { probe_copy(a.get(), b.get(), bytes, s.get()); });
    const double t_triad = timer.median_s(s.get(), [&] { probe_triad(a.as<float>(), b.as<const float>(), c.as<const float>(), 1.5f, bytes, s.get()); });
    r.read_bytes_per_s = static_cast<double>(bytes) / t_read;
    r.copy_bytes_per_s = 2.0 * static_cast<double>(bytes) / t_copy;
    r.triad_bytes_per_s = 3.0 * static_cast<double>(bytes) / t_triad;
    if (timings) {
        const auto push = [&](const char* kernel, std::uint64_t moved, double t) {
            ValidationTiming v;
            v.kernel = kernel;
            v.shape = std::to_string(bytes >> 20) + " MiB";
            v.bytes = moved;
            v.time_s = t;
            timings->push_back(v);
        };
        push("probe_read", bytes, t_read);
        push("probe_copy", 2 * bytes, t_copy);
        push("probe_triad", 3 * bytes, t_triad);
    }
    log << "  probe over " << (bytes >> 20) << " MiB: read " << r.read_bytes_per_s / 1e9 << " GB/s, copy " << r.copy_bytes_per_s / 1e9 << " GB/s, triad "
        << r.triad_bytes_per_s / 1e9 << " GB/s\n";
    return r;
}

std::vector<ValidationTiming> run_timings(const ValidationConfig& c, const DeviceInfo& device, std::ostream& log, std::vector<std::string>* notes) {
    std::vector<ValidationTiming> out;
    if (c.batches.empty() && c.q_heads == 0) return out;
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(c.time_budget_s));
    Timer timer(device, c.warmup, c.repeats);
    LtGemm lt;
    CudaStream s;
    // Coarse batches (1, 8, 64, 512, 4096: powers of 8) for every shape first, then the rest: a
    // time budget that runs out still leaves every shape timed at the same batches, and a measured
    // decode step needs all of a block's linears at one batch (core/plan/measured_overlay.h).
    std::vector<std::int64_t> coarse, fine;
    for (const std::int64_t m : c.batches) {
        const bool power_of_8 = m > 0 && (m & (m - 1)) == 0 && std::countr_zero(static_cast<std::uint64_t>(m)) % 3 == 0;
        (power_of_8 ? coarse : fine).push_back(m);
    }
    bool first_pass = true;
    for (const std::vector<std::int64_t>* pass : {&coarse, &fine}) {
        if (pass->empty()) continue;
        ValidationConfig pc = c;
        pc.batches = *pass;
        for (const GemmShapeSpec& shape : c.shapes) {
            if (shape.k % c.group_size != 0 || shape.n % 16 != 0 || shape.k % 16 != 0) {
                if (first_pass)
                    notes->push_back("shape " + shape.label + " (" + std::to_string(shape.n) + " x " + std::to_string(shape.k) +
                                     ") skipped: N and K must be multiples of 16 and K of the group size");
                continue;
            }
            time_gemm_shape(pc, shape, device, timer, lt, s, deadline, first_pass, &out, notes, log);
        }
        first_pass = false;
    }
    time_attention(c, timer, s, deadline, &out, notes, log);
    return out;
}

ValidationReport run_validation(const ValidationConfig& config, const DeviceInfo& device, std::ostream& log) {
    ValidationReport r;
    r.device = device;
    log << "checking every kernel against its host reference\n";
    r.checks = run_correctness_checks(log);
    log << "bandwidth probe\n";
    r.probe = run_bandwidth_probe(device, std::max(5, config.repeats), &r.timings, log);
    log << "timing\n";
    std::vector<ValidationTiming> t = run_timings(config, device, log, &r.notes);
    r.timings.insert(r.timings.end(), t.begin(), t.end());
    return r;
}

}  // namespace quantplan::kernels
