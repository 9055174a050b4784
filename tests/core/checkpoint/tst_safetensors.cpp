// The strict safetensors header reader against the official loader's rules
// (../shared/reference/checkpoint-formats.md §0), hostile files, and the module-name patterns.
#include <chrono>

#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "core/base/error.h"
#include "core/checkpoint/name_pattern.h"
#include "core/checkpoint/safetensors.h"
#include "tests/core/checkpoint/tst_inspect_fixtures.h"

using namespace quantplan;
using namespace quantplan::test;
namespace bdata = boost::unit_test::data;

namespace {

// A file from a header text and a buffer of `data_bytes` zeros, with the length prefix `n`
// (default: the text's length).
std::string raw_file(const std::string& header, std::uint64_t data_bytes, std::optional<std::uint64_t> n = std::nullopt) {
    const std::uint64_t len = n.value_or(header.size());
    std::string out;
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((len >> (8 * i)) & 0xFF));
    out += header;
    out.append(static_cast<std::size_t>(data_bytes), '\0');
    return out;
}

SafetensorsHeader parse(const std::string& file) { return parse_safetensors_header(file, file.size(), "test.safetensors"); }

// A hostile file and the official loader's error name its message must carry.
struct Hostile {
    const char* name;
    std::string file;
    const char* kind;
};
std::ostream& operator<<(std::ostream& os, const Hostile& h) { return os << h.name; }

std::vector<Hostile> hostile_files() {
    const std::string ok = encode_safetensors({{"a", D::F32, {2, 2}, {}}, {"b", D::BF16, {3}, {}}});
    std::vector<Hostile> v;
    v.push_back({"empty", "", "HeaderTooSmall"});
    v.push_back({"seven bytes", std::string(7, '\0'), "HeaderTooSmall"});
    v.push_back({"truncated by one byte", ok.substr(0, ok.size() - 1), "MetadataIncompleteBuffer"});
    v.push_back({"truncated inside the header", ok.substr(0, 20), "InvalidHeaderLength"});
    v.push_back({"trailing byte", ok + std::string(1, '\0'), "MetadataIncompleteBuffer"});
    v.push_back({"header length 2^64-1", raw_file("{}", 0, ~std::uint64_t{0}), "HeaderTooLarge"});
    v.push_back({"header length bound + 1", raw_file("{}", 0, kSafetensorsMaxHeaderBytes + 1), "HeaderTooLarge"});
    v.push_back({"header length past the end", raw_file("{}", 0, 90'000'000), "InvalidHeaderLength"});
    v.push_back({"invalid JSON", raw_file("{\"a\": {\"dtype\": \"F32\",", 0), "InvalidHeaderDeserialization"});
    v.push_back({"not an object", raw_file("[1, 2, 3]", 0), "InvalidHeaderDeserialization"});
    v.push_back({"not UTF-8", raw_file("{\"\xff\xfe\": 1}", 0), "InvalidHeader"});
    v.push_back({"overlong UTF-8", raw_file("{\"\xc0\xaf\": 1}", 0), "InvalidHeader"});
    v.push_back({"overlapping offsets", raw_file(R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[8],"data_offsets":[4,12]}})", 12),
                 "InvalidOffset"});
    v.push_back({"hole between tensors", raw_file(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[8,12]}})", 12),
                 "InvalidOffset"});
    v.push_back({"first tensor not at 0", raw_file(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}})", 8), "InvalidOffset"});
    v.push_back({"end before begin", raw_file(R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"U8","shape":[4],"data_offsets":[4,0]}})", 4),
                 "InvalidOffset"});
    v.push_back({"offsets past the end", raw_file(R"({"a":{"dtype":"U8","shape":[1000],"data_offsets":[0,1000]}})", 10), "MetadataIncompleteBuffer"});
    v.push_back({"offset 2^64-1", raw_file(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,18446744073709551615]}})", 4), "TensorInvalidInfo"});
    v.push_back({"size not shape x dtype", raw_file(R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})", 12), "TensorInvalidInfo"});
    v.push_back({"shape product overflows", raw_file(R"({"a":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8), "ValidationOverflow"});
    v.push_back({"shape x bits overflows", raw_file(R"({"a":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,8]}})", 8), "ValidationOverflow"});
    v.push_back({"dimension past int64", raw_file(R"({"a":{"dtype":"U8","shape":[18446744073709551615,0],"data_offsets":[0,0]}})", 0), "ValidationOverflow"});
    v.push_back({"negative dimension", raw_file(R"({"a":{"dtype":"U8","shape":[-4],"data_offsets":[0,4]}})", 4), "InvalidHeaderDeserialization"});
    v.push_back({"float dimension", raw_file(R"({"a":{"dtype":"U8","shape":[4.5],"data_offsets":[0,4]}})", 4), "InvalidHeaderDeserialization"});
    v.push_back({"misaligned sub-byte tensor", raw_file(R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}})", 1), "MisalignedSlice"});
    v.push_back({"unknown dtype", raw_file(R"({"a":{"dtype":"Q4_K","shape":[4],"data_offsets":[0,4]}})", 4), "InvalidHeaderDeserialization"});
    v.push_back({"lower-case dtype", raw_file(R"({"a":{"dtype":"f32","shape":[1],"data_offsets":[0,4]}})", 4), "InvalidHeaderDeserialization"});
    v.push_back({"missing data_offsets", raw_file(R"({"a":{"dtype":"U8","shape":[4]}})", 4), "InvalidHeaderDeserialization"});
    v.push_back({"three offsets", raw_file(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4,8]}})", 4), "InvalidHeaderDeserialization"});
    v.push_back({"non-string metadata", raw_file(R"({"__metadata__":{"format":"pt","step":1000}})", 0), "InvalidHeaderDeserialization"});
    v.push_back({"metadata not an object", raw_file(R"({"__metadata__":["pt"]})", 0), "InvalidHeaderDeserialization"});
    v.push_back({"duplicate tensor name", raw_file(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"a":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}})", 8),
                 "InvalidHeaderDeserialization"});
    v.push_back({"nesting 100000 deep", raw_file(std::string(100000, '[') + std::string(100000, ']'), 0), "InvalidHeaderDeserialization"});
    v.push_back({"NUL padding", raw_file(std::string("{}") + std::string(6, '\0'), 0), "InvalidHeaderDeserialization"});
    return v;
}

bool has_kind(const Error& e, const char* kind) {
    const std::string what = e.what();
    BOOST_TEST_MESSAGE("  error: " << what);
    return what.find(std::string("(") + kind + ")") != std::string::npos && what.find("test.safetensors") != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(safetensors)

BOOST_AUTO_TEST_CASE(dtype_table_spells_and_sizes_every_dtype) {
    const std::pair<const char*, int> expected[] = {{"BOOL", 8}, {"F4", 4}, {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8}, {"I8", 8}, {"F8_E5M2", 8},
                                                    {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"I16", 16}, {"U16", 16}, {"F16", 16}, {"BF16", 16}, {"I32", 32},
                                                    {"U32", 32}, {"F32", 32}, {"C64", 64}, {"F64", 64}, {"I64", 64}, {"U64", 64},
                                                    {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}};
    for (const auto& [name, bits] : expected) {
        const auto d = parse_safetensors_dtype(name);
        BOOST_TEST_REQUIRE(d.has_value(), name);
        BOOST_TEST(safetensors_dtype_traits(*d).bits == bits, name);
        BOOST_TEST(safetensors_dtype_name(*d) == name);
    }
    BOOST_TEST(!parse_safetensors_dtype("bf16").has_value());
}

BOOST_AUTO_TEST_CASE(written_files_read_back_with_offsets_in_writer_order) {
    const std::vector<SafetensorsEntry> tensors{{"w", D::BF16, {3, 5}, {}}, {"s", D::F32, {3}, {}}, {"q", D::I32, {2, 2}, {}}, {"n", D::U8, {7}, {}},
                                                {"scalar", D::F32, {}, {}}, {"empty", D::F16, {0, 4}, {}}, {"fp4", D::F4, {6}, {}}};
    const std::string file = encode_safetensors(tensors, {{"format", "pt"}});
    const SafetensorsHeader h = parse(file);
    BOOST_TEST(h.file_bytes == file.size());
    BOOST_TEST((h.overhead_bytes() - 8) % 8 == 0u);  // the writer pads the header to 8 bytes
    BOOST_TEST(h.metadata.at("format") == "pt");
    BOOST_TEST_REQUIRE(h.tensors.size() == tensors.size());
    // Widest dtype first (F32, I32 before BF16, F16, U8, F4), then by name; offsets contiguous.
    const std::vector<std::string> order{"s", "scalar", "q", "w", "empty", "n", "fp4"};
    std::uint64_t begin = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
        BOOST_TEST(h.tensors[i].name == order[i]);
        BOOST_TEST(h.tensors[i].begin_offset == begin);
        begin = h.tensors[i].end_offset;
    }
    BOOST_TEST(h.data_bytes() == 12u + 4u + 16u + 30u + 0u + 7u + 3u);
    BOOST_TEST(h.tensors[1].shape.empty());  // 0-rank scalars are legal
    BOOST_TEST(h.tensors[4].byte_count() == 0u);  // so are zero-size tensors
}

BOOST_AUTO_TEST_CASE(the_writer_refuses_what_it_cannot_write) {
    BOOST_CHECK_THROW(encode_safetensors({{"a", D::U8, {1}, {}}, {"a", D::U8, {1}, {}}}), Error);
    BOOST_CHECK_THROW(encode_safetensors({{"a", D::U8, {-1}, {}}}), Error);
    BOOST_CHECK_THROW(encode_safetensors({{"a", D::U8, {4}, "abc"}}), Error);
    BOOST_CHECK_THROW(encode_safetensors({{"a", D::F4, {3}, {}}}), Error);
}

BOOST_AUTO_TEST_CASE(leading_whitespace_and_an_empty_header_are_accepted) {
    const SafetensorsHeader a = parse(raw_file("  {}  ", 0));
    BOOST_TEST(a.tensors.empty());
    const SafetensorsHeader b = parse(raw_file(R"({"__metadata__":null,"x":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", 2));
    BOOST_TEST(b.tensors.size() == 1u);
}

BOOST_DATA_TEST_CASE(hostile_files_give_one_clear_error, bdata::make(hostile_files()), h) {
    BOOST_CHECK_EXCEPTION(parse(h.file), Error, [&](const Error& e) { return has_kind(e, h.kind); });
}

BOOST_DATA_TEST_CASE(hostile_files_on_disk_give_the_same_error, bdata::make(hostile_files()), h) {
    TempDir dir;
    const auto path = dir.path() / "test.safetensors";
    write_bytes(path, h.file);
    BOOST_CHECK_EXCEPTION(read_safetensors_header(path), Error, [&](const Error& e) { return has_kind(e, h.kind); });
}

BOOST_AUTO_TEST_CASE(a_claimed_header_longer_than_the_file_is_not_read) {
    // 90 MB claimed, 10 bytes present: refused from the length and the file size alone.
    TempDir dir;
    const auto path = dir.path() / "test.safetensors";
    write_bytes(path, raw_file("{}", 0, 90'000'000));
    const auto t0 = std::chrono::steady_clock::now();
    BOOST_CHECK_EXCEPTION(read_safetensors_header(path), Error, [](const Error& e) { return has_kind(e, "InvalidHeaderLength"); });
    BOOST_TEST(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 1.0);
}

BOOST_AUTO_TEST_CASE(a_folder_is_not_a_file) {
    TempDir dir;
    BOOST_CHECK_THROW(read_safetensors_header(dir.path()), Error);
    BOOST_CHECK_THROW(read_safetensors_header(dir.path() / "absent.safetensors"), Error);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(name_patterns)

struct RegexCase {
    const char* pattern;
    const char* text;
    bool prefix;  // re.match
    bool full;    // re.fullmatch
};
std::ostream& operator<<(std::ostream& os, const RegexCase& c) { return os << c.pattern << " ~ " << c.text; }

const RegexCase kRegexCases[] = {
    {".*mlp.*", "model.layers.0.mlp.down_proj", true, true},
    {"mlp", "model.layers.0.mlp.down_proj", false, false},  // re.match anchors at the start
    {"model\\.layers\\.\\d+\\.self_attn\\.(q|k|v)_proj", "model.layers.12.self_attn.k_proj", true, true},
    {"model\\.layers\\.\\d+\\.self_attn\\.(q|k|v)_proj", "model.layers.12.self_attn.o_proj", false, false},
    {".*\\.mlp\\.gate$", "model.layers.3.mlp.gate", true, true},
    {".*\\.mlp\\.gate$", "model.layers.3.mlp.gate_proj", false, false},
    {".*layers\\.[0-3]\\.", "model.layers.2.mlp.up_proj", true, false},
    {".*layers\\.[^0-3]\\.", "model.layers.2.mlp.up_proj", false, false},
    {"(?:model\\.)?lm_head", "lm_head", true, true},
    {"(?P<x>model)\\.embed_tokens", "model.embed_tokens", true, true},
    {"a{2,3}b", "aaab", true, true},
    {"a{2,3}b", "ab", false, false},
    {"a{,2}b", "aab", true, true},
    {"x{2}", "x{2}", false, false},
    {"x{a}", "x{a}", true, true},  // a brace that is no quantifier is a literal, as in Python
    {"[\\w.]+_proj", "model.layers.0.self_attn.q_proj", true, true},
    {"\\Amodel\\Z", "model", true, true},
    {"^$", "", true, true},
    {"a*?b", "aab", true, true},
    {"re|model", "model.x", true, false},
};

BOOST_DATA_TEST_CASE(regex_subset_follows_python_re, bdata::make(kRegexCases), c) {
    const NamePattern p = NamePattern::compile(c.pattern, "test");
    BOOST_TEST(p.match_prefix(c.text) == c.prefix);
    BOOST_TEST(p.match_full(c.text) == c.full);
}

BOOST_AUTO_TEST_CASE(unsupported_or_broken_patterns_are_refused_with_the_pattern) {
    for (const char* bad : {"(?=x)", "(?!x)", "(?<!gate)$", "(?i)lm_head", "(a)\\1", "\\bword", "(unclosed", "closed)", "[abc", "*x", "a**", "x{3,2}",
                            "(a{1000}){1000}", "a\\"}) {
        BOOST_CHECK_EXCEPTION(NamePattern::compile(bad, "config.json: ignore"), Error, [&](const Error& e) {
            const std::string w = e.what();
            BOOST_TEST_MESSAGE("  " << w);
            return w.find("config.json: ignore") != std::string::npos && w.find(bad) != std::string::npos;
        });
    }
    BOOST_CHECK_THROW(NamePattern::compile(std::string(kMaxPatternChars + 1, 'a'), "f"), Error);
}

BOOST_AUTO_TEST_CASE(catastrophic_patterns_run_in_linear_time) {
    // Backtracking engines take exponential time on these; the lock-step NFA does not.
    const std::string long_name(20000, 'a');
    const auto t0 = std::chrono::steady_clock::now();
    for (const char* p : {"(a*)*b", "(a|a)*b", "(a|aa)*$b", ".*.*.*.*.*.*.*.*x", "(.*a){20}b"}) {
        const NamePattern np = NamePattern::compile(p, "test");
        BOOST_TEST(!np.match_full(long_name), p);
        BOOST_TEST(!np.match_prefix(long_name + "c"), p);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Bound: 10 matches of 20,000 characters through at most ~100 NFA states each take well
    // under a second on any machine that runs the suite (measured ~0.05 s).
    constexpr double kLinearTimeBudgetSeconds = 2.0;
    BOOST_TEST(s < kLinearTimeBudgetSeconds, "took " << s << " s");
}

BOOST_AUTO_TEST_CASE(globs_follow_fnmatch) {
    BOOST_TEST(glob_match("*lm_head*", "lm_head"));
    BOOST_TEST(glob_match("model.layers.*.self_attn", "model.layers.17.self_attn"));
    BOOST_TEST(!glob_match("model.layers.*.self_attn", "model.layers.17.self_attn.q_proj"));
    BOOST_TEST(glob_match("*mlp.gate.*", "model.layers.0.mlp.gate."));
    BOOST_TEST(!glob_match("*mlp.gate.*", "model.layers.0.mlp.gate_proj."));
    BOOST_TEST(glob_match("layer?", "layer7"));
    BOOST_TEST(glob_match("layer[0-3]", "layer2"));
    BOOST_TEST(!glob_match("layer[!0-3]", "layer2"));
    BOOST_TEST(glob_match("a[b", "a[b"));  // an unclosed bracket is a literal
    BOOST_TEST(glob_match("", ""));
    BOOST_TEST(!glob_match("", "x"));
    BOOST_TEST(glob_match("*", ""));
    // Many stars on a long name stay fast.
    BOOST_TEST(!glob_match("*a*a*a*a*a*a*a*a*b", std::string(5000, 'a')));
}

BOOST_AUTO_TEST_SUITE_END()
