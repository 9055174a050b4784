#include "ui/window/checkpoint_scan.h"

#include <QtCore/QFileInfo>

#include "core/checkpoint/inspector.h"
#include "core/scheme/scheme.h"

namespace quantplan::ui {

CheckpointScan scan_checkpoint(const QString& path, JobContext& context) {
    context.report(0, QStringLiteral("reading the safetensors headers"));
    const CheckpointInput input = read_checkpoint(path.toStdString());
    context.check_cancelled();
    context.report(50, QStringLiteral("comparing %1 files with the prediction").arg(input.files.size()));
    const InspectReport report = inspect_checkpoint(input);
    context.check_cancelled();

    CheckpointScan scan;
    const QFileInfo info(path);
    scan.folder = info.isDir() ? info.absoluteFilePath() : info.absolutePath();
    scan.config = report.model;
    if (scan.config) scan.config->name = QFileInfo(scan.folder).fileName().toStdString();  // not "config.json"
    if (!report.model)
        scan.config_error = report.has_config ? QStringLiteral("config.json in %1 could not be used").arg(scan.folder)
                                              : QStringLiteral("no config.json in %1").arg(scan.folder);
    if (report.quantization_parsed && report.quantization.method != QuantMethod::None) {
        scan.declared_method = QString::fromUtf8(quant_method_name(report.quantization.method));
        for (const QuantRule& rule : report.quantization.rules) {
            if (rule.skip) continue;
            scan.declared_scheme = QString::fromStdString(scheme_name(rule.scheme));
            scan.declared_description = QString::fromStdString(rule.description);
            break;
        }
    }
    scan.safetensors_files = static_cast<std::int64_t>(report.files.size());
    scan.compared = report.compared;
    scan.file_bytes = report.file_bytes;
    scan.header_bytes = report.header_bytes;
    scan.actual_tensor_bytes = report.actual_bytes;
    scan.predicted_tensor_bytes = report.predicted_bytes;
    scan.mismatch_count = static_cast<std::int64_t>(report.mismatches.size());
    const auto add = [&](const std::string& line) {
        if (scan.findings.size() < kMaxListedFindings) scan.findings << QString::fromStdString(line);
        else ++scan.unlisted_findings;
    };
    for (const std::string& e : report.errors) add(e);
    for (const Mismatch& m : report.mismatches) add(m.name + ": " + m.detail);
    for (const std::string& w : report.warnings) add(w);
    context.report(100, QStringLiteral("%1 safetensors files inspected").arg(scan.safetensors_files));
    return scan;
}

}  // namespace quantplan::ui
