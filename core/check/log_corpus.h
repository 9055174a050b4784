#pragma once
// The log corpus as a whole (tests/data/logs/, docs/check.md): each startup log checked at its own
// settings, and per quantity the median and largest |error| of the predictions against what the
// logs print, with the log that shows the largest. What `--check-corpus DIR` prints and the corpus
// test guards.
//
// In: one CheckResult per log (the caller reads the files and checks them). Out: values; no I/O.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/check/check.h"

namespace quantplan::check {

// One checked log of the corpus.
struct CorpusLog {
    std::string name;        // the file name
    CheckResult result;
    std::string refused;     // the reader's or the check's one-line error, when the log was refused
};

// The options a corpus log is checked with: the bundled model and GPU its `.expect.json` names
// (`quantplan_model`, `quantplan_gpu`), so each log is priced at the setup it ran whether or not
// the log alone identifies it (identification is counted apart). Throws Error(source) on a
// malformed file.
CheckOptions options_from_expectation(std::string_view expect_json, const std::string& source);

// The predictions of one quantity over the corpus.
struct CorpusQuantity {
    std::string quantity;            // a CheckRow quantity ("kv_cache_tokens", "weights_bytes", ...)
    int logged = 0;                  // logs that print it
    int predicted = 0;               // of those, logs where it was priced
    double median_abs_error = 0;     // over the priced ones
    double median_signed_error = 0;
    double max_abs_error = 0;
    std::string max_log;             // the log with the largest |error|
};

struct CorpusSummary {
    std::vector<CorpusLog> logs;
    std::vector<CorpusQuantity> quantities;  // in the check's row order
};

// Checks one corpus log with `options` (options_from_expectation). A model the expectation names
// that quantplan does not price (bundled only as evidence) is dropped and the log checked as it is,
// with a note; a log that still cannot be checked is returned with `refused` set.
CorpusLog check_corpus_log(const std::string& name, const StartupLog& log, CheckOptions options, const CheckInputs& inputs);

// Summarises the checked logs (their rows' error_fraction per quantity).
CorpusSummary summarize_corpus(std::vector<CorpusLog> logs);

// The quantity's line of the summary; nullptr when no log prints it.
const CorpusQuantity* corpus_quantity(const CorpusSummary& s, const std::string& quantity);

// The summary as Markdown: one row per log (setup identified and each quantity's error) and one per
// quantity (logs, priced, median and largest |error|, median signed error).
std::string corpus_markdown(const CorpusSummary& s);

}  // namespace quantplan::check
