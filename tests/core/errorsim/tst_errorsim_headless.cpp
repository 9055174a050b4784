// The headless error lab: the --errorsim-* parsers (a bad value names its option), the report
// rows, the JSON section, and real weights read from a .safetensors file the test writes.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/base/error.h"
#include "core/checkpoint/safetensors.h"
#include "core/errorsim/errorsim_json.h"
#include "core/errorsim/errorsim_request.h"
#include "core/errorsim/layer_data.h"
#include "core/errorsim/rng.h"

using namespace quantplan;
using namespace quantplan::errorsim;
namespace bdata = boost::unit_test::data;

namespace {

// The option a parser's error names, or "no error".
template <typename F>
std::string error_field(F f) {
    try {
        f();
    } catch (const Error& e) {
        BOOST_TEST_MESSAGE(e.what());
        return e.field();
    }
    return "no error";
}

// A temporary .safetensors file removed at scope exit.
struct TempFile {
    std::filesystem::path path;
    explicit TempFile(const std::string& bytes) {
        path = std::filesystem::temp_directory_path() / ("quantplan_errorsim_" + std::to_string(std::random_device{}()) + ".safetensors");
        std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    ~TempFile() { std::filesystem::remove(path); }
};

std::string bf16_bytes(const std::vector<float>& v) {
    std::string out;
    for (float f : v) {
        const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
        out.push_back(static_cast<char>((bits >> 16) & 0xFF));
        out.push_back(static_cast<char>((bits >> 24) & 0xFF));
    }
    return out;
}

std::string f32_bytes(const std::vector<float>& v) {
    std::string out(v.size() * 4, '\0');
    std::memcpy(out.data(), v.data(), out.size());
    return out;
}

// bf16-exact weights (the low 16 bits zero) so the read can be compared bit for bit.
std::vector<float> bf16_values(std::size_t n, std::uint64_t seed) {
    Rng rng(seed);
    std::vector<float> v(n);
    for (float& f : v) f = std::bit_cast<float>(std::bit_cast<std::uint32_t>(static_cast<float>(0.05 * rng.normal())) & 0xFFFF0000u);
    return v;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(errorsim_parsers)

BOOST_AUTO_TEST_CASE(formats) {
    const auto f = parse_weight_formats("int4, int8,fp8,fp8_e5m2,fp4,nvfp4,mxfp4,int3-sym,int8-asym", "--errorsim-formats");
    std::vector<std::string> names;
    for (const auto& w : f) names.push_back(weight_format_name(w));
    const std::vector<std::string> expected{"int4", "int8", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1", "nvfp4", "mxfp4", "int3-sym", "int8-asym"};
    BOOST_TEST(names == expected, boost::test_tools::per_element());
    BOOST_TEST(!f[0].symmetric);  // sub-8-bit integers default to AWQ's asymmetric groups
    BOOST_TEST(f[1].symmetric);
    BOOST_TEST((f[5].group == GroupShape::per_group(16)));
    BOOST_TEST((f[6].group == GroupShape::per_group(32)));
    for (const char* bad : {"int9", "int1", "int4-foo", "", "int4,,int8", "bogus", "int", "int4-sym-asym"})
        BOOST_TEST(error_field([&] { parse_weight_formats(bad, "--errorsim-formats"); }) == "--errorsim-formats", "'" << bad << "'");
}

BOOST_AUTO_TEST_CASE(granularities) {
    const auto g = parse_granularities("tensor,channel,g128,block128x128,block64,per-channel", "--errorsim-granularities");
    BOOST_TEST_REQUIRE(g.size() == 6u);
    BOOST_TEST(g[0].is_per_tensor());
    BOOST_TEST(g[1].is_per_row());
    BOOST_TEST((g[2] == GroupShape::per_group(128)));
    BOOST_TEST((g[3] == GroupShape::block(128, 128)));
    BOOST_TEST((g[4] == GroupShape::block(64, 64)));
    BOOST_TEST(parse_granularities("ladder", "x").size() == 5u);
    for (const char* bad : {"g0", "g-5", "gx", "g", "g12.5", "block0", "block4x0", "groups", ""}) {
        BOOST_TEST(error_field([&] { parse_granularities(bad, "--errorsim-granularities"); }) == "--errorsim-granularities", "'" << bad << "'");
    }
    // A non-positive group size says so.
    try {
        parse_granularities("g0", "--errorsim-granularities");
    } catch (const Error& e) {
        BOOST_TEST(std::string(e.what()).find("positive") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(methods) {
    const auto m = parse_methods("rtn,gptq,awq+gptq,smoothquant@0.8,gptq-actorder,awq-clip,sq+gptq", "--errorsim-methods");
    BOOST_TEST_REQUIRE(m.size() == 7u);
    BOOST_TEST(!m[0].toggles.gptq);
    BOOST_TEST((m[2].toggles.awq && m[2].toggles.gptq));
    BOOST_TEST(m[3].toggles.smoothquant_alpha == 0.8);
    BOOST_TEST((m[4].toggles.gptq && m[4].toggles.act_order));
    BOOST_TEST(m[5].toggles.awq_clip_search);
    BOOST_TEST(m[6].name == "sq+gptq");
    for (const char* bad : {"awq+smoothquant", "foo", "sq@2", "smoothquant@", "smoothquant0.5", "gptq+", ""})
        BOOST_TEST(error_field([&] { parse_methods(bad, "--errorsim-methods"); }) == "--errorsim-methods", "'" << bad << "'");
}

BOOST_AUTO_TEST_CASE(activations) {
    BOOST_TEST(!parse_activation("a16", "o").format);
    const ActivationQuantSpec a = parse_activation("int8", "o");
    BOOST_TEST((a.format == DType::Int8 && a.per_token && !a.is_static && a.symmetric));
    const ActivationQuantSpec s = parse_activation("int8-static", "o");
    BOOST_TEST((s.is_static && !s.per_token));
    BOOST_TEST(!parse_activation("fp8-tensor", "o").per_token);
    BOOST_TEST(!parse_activation("int8-asym", "o").symmetric);
    BOOST_TEST(activation_name(parse_activation("fp8", "o")) == "fp8_e4m3-token");
    for (const char* bad : {"fp8-token-static", "fp8-asym", "int9", "bogus", "int8-sideways"})
        BOOST_TEST(error_field([&] { parse_activation(bad, "--errorsim-activation"); }) == "--errorsim-activation", "'" << bad << "'");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(errorsim_report)

BOOST_AUTO_TEST_CASE(default_request_gives_the_seed_ladders) {
    const ErrorsimReport r = run_errorsim(default_errorsim_request());
    BOOST_TEST_REQUIRE(r.rows.size() == 10u);  // int4 and int8 x five granularities x rtn
    BOOST_TEST(r.rows[2].format == "int4");
    BOOST_TEST(r.rows[2].granularity == "g128");
    BOOST_TEST(r.rows[2].result.effective_bits == 4.15625);
    BOOST_TEST(r.rows[5].format == "int8");
    BOOST_TEST(r.rows[5].granularity == "per-tensor");
    const nlohmann::json j = errorsim_json(r);
    BOOST_TEST(j["source"] == "synthetic");
    BOOST_TEST(j["layer"]["out_features"] == 32);
    BOOST_TEST(j["layer"]["in_features"] == 256);
    BOOST_TEST(j["activations"]["name"] == "a16");
    BOOST_TEST_REQUIRE(j["rows"].size() == 10u);
    const nlohmann::json& row = j["rows"][2];
    for (const char* key : {"format", "granularity", "method", "layer_error_calibration_fraction", "layer_error_heldout_fraction",
                            "weight_error_fraction", "effective_bits", "median_levels_per_group", "median_levels_activation_channel",
                            "weight_spread_before_ratio", "weight_spread_after_ratio", "awq_alpha", "log"})
        BOOST_TEST(row.contains(key), key);
    BOOST_TEST(row["layer_error_calibration_fraction"].get<double>() == r.rows[2].result.layer_error_calibration);
    BOOST_TEST(row["awq_alpha"].is_null());
    BOOST_TEST_REQUIRE(j["kv_cache"].size() == 4u);
    BOOST_TEST(j["kv_cache"][0]["format"] == "fp8");
    BOOST_TEST(j["kv_cache"][2]["per_token_head"] == true);
    BOOST_TEST(j["kv_cache"][2]["effective_bits"].get<double>() == 8.125);
    const std::string table = errorsim_table(r);
    BOOST_TEST(table.find("g128") != std::string::npos);
    BOOST_TEST(table.find("decision log (int4") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(fixed_granularity_formats_run_at_their_own_group) {
    ErrorsimRequest q = default_errorsim_request();
    q.formats = parse_weight_formats("nvfp4,mxfp4", "f");
    q.methods = parse_methods("rtn,awq", "m");
    q.activations = parse_activation("fp8", "a");
    const ErrorsimReport r = run_errorsim(q);
    BOOST_TEST_REQUIRE(r.rows.size() == 4u);
    BOOST_TEST(r.rows[0].granularity == "g16");
    BOOST_TEST(r.rows[2].granularity == "g32");
    BOOST_TEST(r.rows[1].result.awq_alpha.has_value());
    BOOST_TEST(r.rows[0].result.median_levels_activation_channel > 0.0);
    BOOST_TEST(errorsim_json(r)["rows"][1]["awq_alpha"].is_number());
}

BOOST_AUTO_TEST_CASE(real_tensor_from_safetensors) {
    const std::int64_t n = 16, k = 64, t = 100;
    const std::vector<float> w = bf16_values(static_cast<std::size_t>(n * k), 5);
    std::vector<float> x(static_cast<std::size_t>(t * k));
    Rng rng(6);
    for (float& v : x) v = static_cast<float>(rng.normal());
    for (std::int64_t i = 0; i < t; ++i) x[static_cast<std::size_t>(i * k + 7)] *= 30.0f;  // one loud channel
    std::vector<SafetensorsEntry> entries;
    entries.push_back({"model.layers.0.mlp.down_proj.weight", SafetensorsDtype::BF16, {n, k}, bf16_bytes(w)});
    entries.push_back({"acts", SafetensorsDtype::F32, {t, k}, f32_bytes(x)});
    entries.push_back({"packed", SafetensorsDtype::I8, {4, 4}, std::string(16, '\1')});
    const TempFile file(encode_safetensors(entries));
    const std::string path = file.path.string();

    const RealWeights rw = read_safetensors_tensor(path, "model.layers.0.mlp.down_proj.weight");
    BOOST_TEST(rw.rows == n);
    BOOST_TEST(rw.cols == k);
    BOOST_TEST((rw.stored == DType::Bf16));
    BOOST_TEST(rw.values == w, boost::test_tools::per_element());

    // Synthetic activations over the real weights.
    ErrorsimRequest q = default_errorsim_request();
    q.tensor = path + ":model.layers.0.mlp.down_proj.weight";
    ErrorsimReport r = run_errorsim(q);
    BOOST_TEST(r.out_features == n);
    BOOST_TEST(r.in_features == k);
    BOOST_TEST(r.rows.size() == 10u);
    BOOST_TEST(r.source.find("synthetic activations") != std::string::npos);
    // Supplied activations: half calibrate, half are held out; the loud channel is found.
    q.activation_tensor = path + ":acts";
    r = run_errorsim(q);
    BOOST_TEST(r.request.layer.calibration_tokens == 50);
    BOOST_TEST(r.request.layer.outlier_channels == 1);
    const Layer layer = layer_from_weights(rw, LayerSpec{}, nullptr);
    for (std::int64_t j = 0; j < k; ++j) BOOST_TEST(layer.data().w(1, j) == w[static_cast<std::size_t>(k + j)]);

    BOOST_TEST(error_field([&] { read_safetensors_tensor(path, "missing"); }) == "tensor 'missing' in " + path);
    BOOST_TEST(error_field([&] { read_safetensors_tensor(path, "packed"); }) == "tensor 'packed' in " + path);
    BOOST_TEST(error_field([&] { read_safetensors_tensor(path, "acts", 1000); }) == "tensor 'acts' in " + path);
    BOOST_TEST(error_field([&] { read_safetensors_tensor(path + ".nope", "acts"); }) != "no error");
    ErrorsimRequest bad = default_errorsim_request();
    bad.tensor = "no-colon-here";
    BOOST_TEST(error_field([&] { run_errorsim(bad); }) == "--errorsim-tensor");
    bad = default_errorsim_request();
    bad.activation_tensor = path + ":acts";
    BOOST_TEST(error_field([&] { run_errorsim(bad); }) == "--errorsim-activation-tensor");
}

BOOST_AUTO_TEST_SUITE_END()
