// Checkpoint byte budgets to the byte: the seeds' published checkpoints and the per-format
// formulas of ../shared/reference/checkpoint-formats.md §9.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "core/scheme/bytes.h"
#include "core/scheme/scheme.h"
#include "tests/core/test_support.h"

using namespace quantplan;
namespace bdata = boost::unit_test::data;

namespace {

CheckpointBudget budget(const char* model, const char* scheme) {
    return checkpoint_budget(tensor_inventory(test::bundled_model(model)), parse_scheme(scheme));
}

std::uint64_t role_total(const CheckpointBudget& b, TensorRole role) {
    for (const RoleBudget& r : b.by_role)
        if (r.role == role) return r.total_bytes();
    return 0;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(byte_budgets)

struct SeedBytes {
    const char* model;
    const char* scheme;
    std::uint64_t bytes;
    const char* source;
};
std::ostream& operator<<(std::ostream& os, const SeedBytes& s) { return os << s.model << " " << s.scheme; }

const SeedBytes kSeedBytes[] = {
    {"qwen3-8b", "w4a16-g128", 6'098'479'104, "seed 003: Qwen3-8B-AWQ (published safetensors 6,098,581,864 incl. headers)"},
    {"qwen3-32b", "w4a16-g128", 19'325'298'688, "seed 003: Qwen3-32B-AWQ (published 19,325,481,744)"},
    {"qwen3-8b", "w8a8-fp8-block128", 9'436'551'168, "seed 003: Qwen3-8B-FP8, 128x128 BF16 block scales (published 9,436,628,784)"},
    {"qwen3-8b", "bf16", 16'381'470'720, "seed 003: 8,190,735,360 parameters x 2 bytes"},
};

BOOST_DATA_TEST_CASE(seed_checkpoints_to_the_byte, bdata::make(kSeedBytes), s) {
    BOOST_TEST_MESSAGE(s.source);
    BOOST_TEST(budget(s.model, s.scheme).checkpoint_bytes == s.bytes);
}

BOOST_AUTO_TEST_CASE(qwen3_8b_awq_breakdown_seed_003) {
    // Seed 003: 6,945,767,424 x 4.15625 / 8 = 3,608,543,232 quantized bytes plus 2,489,935,872 in bf16.
    const CheckpointBudget b = budget("qwen3-8b", "w4a16-g128");
    BOOST_TEST(b.quantized_parameters == 6'945'767'424);
    BOOST_TEST(b.quantized_payload_bytes + b.metadata_bytes == 3'608'543'232u);
    BOOST_TEST(b.unquantized_bytes == 2'489'935'872u);
    BOOST_TEST(b.effective_bits == 4.15625);
    BOOST_TEST(b.compression_vs_bf16 == 2.686, boost::test_tools::tolerance(5e-4));  // seed: "a 2.69x reduction"
    BOOST_TEST(role_total(b, TensorRole::Embedding) == 151936u * 4096 * 2);
    BOOST_TEST(b.naive_bytes == 16'381'470'720.0 / 4);  // the "4.10 GB" expectation
}

BOOST_AUTO_TEST_CASE(llama3_8b_seed_000) {
    // Seed 000 §4.1.1/§4.1.3: 16.06 GB becomes 5.73 GB, 2.80x; 3.24x with lm_head quantized.
    constexpr double kTwoDecimals = 0.005;  // the seed prints two decimals
    const CheckpointBudget b16 = budget("llama-3-8b", "bf16");
    const CheckpointBudget b4 = budget("llama-3-8b", "w4a16-g128");
    BOOST_TEST(static_cast<double>(b16.checkpoint_bytes) / 1e9 == 16.06, boost::test_tools::tolerance(kTwoDecimals / 16.06));
    BOOST_TEST(static_cast<double>(b4.checkpoint_bytes) / 1e9 == 5.73, boost::test_tools::tolerance(kTwoDecimals / 5.73));
    BOOST_TEST(b4.compression_vs_bf16 == 2.80, boost::test_tools::tolerance(kTwoDecimals / 2.80));
    Scheme with_head = parse_scheme("w4a16-g128");
    with_head.covers.lm_head = true;
    const CheckpointBudget bh = checkpoint_budget(tensor_inventory(test::bundled_model("llama-3-8b")), with_head);
    BOOST_TEST(bh.compression_vs_bf16 == 3.24, boost::test_tools::tolerance(kTwoDecimals / 3.24));
    // 13.1% of the parameters sit in the embedding and the head.
    const double share = static_cast<double>(2 * 128256 * 4096) / static_cast<double>(b16.total_parameters);
    BOOST_TEST(share == 0.131, boost::test_tools::tolerance(0.0005 / 0.131));
}

// Per-format byte formulas of checkpoint-formats.md §9 on an N x K layer, group G.
BOOST_AUTO_TEST_CASE(layouts_follow_the_exporters) {
    const std::int64_t n = 4096, k = 11008, g_size = 128, g = (k + g_size - 1) / g_size;
    Scheme awq = parse_scheme("w4a16-g128");
    TensorBytes b = quantized_tensor_bytes(awq, n, k);
    BOOST_TEST(b.total_bytes() == static_cast<std::uint64_t>(n * k / 2 + 2 * n * g + 4 * g * (n / 8)));
    awq.layout = CheckpointLayout::Gptq;
    awq.weights.symmetric = true;
    b = quantized_tensor_bytes(awq, n, k);
    BOOST_TEST(b.total_bytes() == static_cast<std::uint64_t>(4 * n * (k * 4 / 32) + 4 * g * (n * 4 / 32) + 2 * n * g + 4 * k));
    const Scheme ct = parse_scheme("w4a16-g128-sym");
    BOOST_TEST(static_cast<int>(ct.layout) == static_cast<int>(CheckpointLayout::CompressedTensorsPacked));
    b = quantized_tensor_bytes(ct, n, k);
    BOOST_TEST(b.total_bytes() == static_cast<std::uint64_t>(4 * n * ((k + 7) / 8) + 2 * n * g + 16));
    b = quantized_tensor_bytes(parse_scheme("w8a8-int8"), n, k);
    BOOST_TEST(b.total_bytes() == static_cast<std::uint64_t>(n * k + 2 * n));  // CT int8 W8A8: N*K + s*N
    b = quantized_tensor_bytes(parse_scheme("w8a8-fp8-block128"), n, k);
    BOOST_TEST(b.total_bytes() == static_cast<std::uint64_t>(n * k + 2 * ((n + 127) / 128) * ((k + 127) / 128)));
    b = quantized_tensor_bytes(parse_scheme("w4a4-nvfp4"), n, k);
    BOOST_TEST(b.total_bytes() == static_cast<std::uint64_t>(n * k / 2 + n * k / 16 + 8));  // ModelOpt NVFP4
    b = quantized_tensor_bytes(parse_scheme("w4a16-mxfp4"), n, k);
    BOOST_TEST(b.total_bytes() == static_cast<std::uint64_t>(n * k / 2 + n * k / 32));  // MXFP4
}

// Edge shapes: 1, alignment +-1, non-multiples; every byte count stays >= the payload bits.
const std::int64_t kEdges[] = {1, 7, 8, 9, 127, 128, 129, 4095, 4097};

BOOST_DATA_TEST_CASE(edge_shapes_never_undercount, bdata::make(kEdges) * bdata::make(kEdges), n, k) {
    for (const std::string& name : canonical_scheme_names()) {
        const Scheme s = parse_scheme(name);
        const TensorBytes b = quantized_tensor_bytes(s, n, k);
        const std::uint64_t payload_bits = static_cast<std::uint64_t>(n * k) * static_cast<std::uint64_t>(dtype_bits(s.weights.storage));
        BOOST_TEST(b.payload_bytes * 8 >= payload_bits, name << " " << n << "x" << k);
        BOOST_TEST(b.payload_bytes * 8 < payload_bits + 32 * static_cast<std::uint64_t>(std::max(n, k)) + 64, name << " " << n << "x" << k);
        if (s.weights.is_quantized()) BOOST_TEST(b.scale_bytes > 0u, name);
    }
}

// A compressed inventory (equal tensors merged, counted) prices every model and scheme exactly as
// the full one, in far fewer entries; plan() prices from it.
BOOST_AUTO_TEST_CASE(compressed_inventory_prices_the_same) {
    for (const char* name : {"qwen3-8b", "qwen3-30b-a3b", "mixtral-8x7b", "qwen2.5-7b-instruct", "llama-3.1-70b"}) {
        const ModelConfig m = test::bundled_model(name);
        const std::vector<TensorInfo> full = tensor_inventory(m);
        const std::vector<TensorInfo> small = compress_inventory(full);
        BOOST_TEST_INFO(name);
        BOOST_TEST(small.size() < full.size() / 10);
        std::int64_t entries = 0;
        for (const TensorInfo& t : small) entries += t.count;
        BOOST_TEST(entries == static_cast<std::int64_t>(full.size()));
        const ParameterCounts a = count_parameters(m, full), b = count_parameters(m, small);
        BOOST_TEST(a.total == b.total);
        BOOST_TEST(a.block_linear_count == b.block_linear_count);
        BOOST_TEST(a.active_block_linears == b.active_block_linears);
        for (const std::string& scheme : canonical_scheme_names()) {
            const CheckpointBudget x = checkpoint_budget(full, parse_scheme(scheme)), y = checkpoint_budget(small, parse_scheme(scheme));
            BOOST_TEST_INFO(scheme);
            BOOST_TEST(x.checkpoint_bytes == y.checkpoint_bytes);
            BOOST_TEST(x.metadata_bytes == y.metadata_bytes);
            BOOST_TEST(x.effective_bits == y.effective_bits);
            BOOST_TEST(x.by_role.size() == y.by_role.size());
        }
    }
}

BOOST_AUTO_TEST_CASE(by_role_split_sums_to_the_checkpoint) {
    for (const char* model : {"qwen3-30b-a3b", "qwen2.5-7b-instruct", "mixtral-8x7b"}) {
        for (const std::string& scheme : canonical_scheme_names()) {
            const CheckpointBudget b = budget(model, scheme.c_str());
            std::uint64_t sum = 0;
            for (const RoleBudget& r : b.by_role) sum += r.total_bytes();
            BOOST_TEST(sum == b.checkpoint_bytes, model << " " << scheme);
            BOOST_TEST(b.metadata_bytes <= b.checkpoint_bytes / 6, model << " " << scheme);  // metadata is a tax, not the bulk
        }
    }
    // Routers and biases stay in bf16 under every scheme.
    const CheckpointBudget moe = budget("qwen3-30b-a3b", "w4a16-g128");
    for (const RoleBudget& r : moe.by_role)
        if (r.role == TensorRole::Router) BOOST_TEST(r.unquantized_bytes == static_cast<std::uint64_t>(r.parameters) * 2);
}

BOOST_AUTO_TEST_SUITE_END()
