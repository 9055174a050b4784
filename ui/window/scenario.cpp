#include "ui/window/scenario.h"

#include <QtCore/QFile>
#include <QtCore/QJsonArray>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QJsonParseError>

#include "core/base/atomic_file.h"
#include "core/base/error.h"

namespace quantplan::ui {

const QStringList& scenario_panel_names() {
    static const QStringList names = {QStringLiteral("crossover"), QStringLiteral("error"), QStringLiteral("checkpoint"),
                                      QStringLiteral("memory"), QStringLiteral("decision"), QStringLiteral("capacity")};
    return names;
}

Scenario parse_scenario(const QByteArray& json, const QString& source, const PlannerSetup& start) {
    QJsonParseError parse_error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parse_error);
    if (parse_error.error != QJsonParseError::NoError)
        throw Error(source.toStdString(), "not valid JSON at offset " + std::to_string(parse_error.offset) + ": " +
                                              parse_error.errorString().toStdString());
    if (!doc.isObject()) throw Error(source.toStdString(), "must be a JSON object with \"name\" and \"steps\"");
    const QJsonObject root = doc.object();
    for (auto it = root.begin(); it != root.end(); ++it) {
        if (it.key() != QLatin1String("name") && it.key() != QLatin1String("steps") && it.key() != QLatin1String("_comment"))
            throw Error((source + QStringLiteral(": ") + it.key()).toStdString(), "unknown key (name, steps)");
    }
    Scenario out;
    const QJsonValue name = root.value(QStringLiteral("name"));
    if (!name.isString() || name.toString().trimmed().isEmpty())
        throw Error((source + QStringLiteral(": name")).toStdString(), "must be a non-empty string");
    out.name = name.toString();
    const QJsonValue steps = root.value(QStringLiteral("steps"));
    if (!steps.isArray() || steps.toArray().isEmpty())
        throw Error((source + QStringLiteral(": steps")).toStdString(), "must be a non-empty array");
    PlannerSetup previous = start;
    const QJsonArray array = steps.toArray();
    for (qsizetype i = 0; i < array.size(); ++i) {
        const QString where = source + QStringLiteral(": steps[%1]").arg(i);
        if (!array.at(i).isObject()) throw Error(where.toStdString(), "must be an object");
        const QJsonObject step = array.at(i).toObject();
        ScenarioStep s;
        const QJsonValue title = step.value(QStringLiteral("title"));
        if (!title.isString() || title.toString().trimmed().isEmpty())
            throw Error((where + QStringLiteral(": title")).toStdString(), "must be a non-empty string");
        s.title = title.toString();
        if (step.contains(QStringLiteral("note"))) {
            if (!step.value(QStringLiteral("note")).isString()) throw Error((where + QStringLiteral(": note")).toStdString(), "must be a string");
            s.note = step.value(QStringLiteral("note")).toString();
        }
        if (step.contains(QStringLiteral("panel"))) {
            const QJsonValue panel = step.value(QStringLiteral("panel"));
            if (!panel.isString() || !scenario_panel_names().contains(panel.toString()))
                throw Error((where + QStringLiteral(": panel")).toStdString(),
                            "must be one of " + scenario_panel_names().join(QStringLiteral(", ")).toStdString());
            s.panel = panel.toString();
        }
        s.setup = setup_from_json(step, previous, where);
        previous = s.setup;
        out.steps.push_back(std::move(s));
    }
    return out;
}

Scenario load_scenario(const QString& path, const PlannerSetup& start) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) throw Error(path.toStdString(), "cannot be read: " + file.errorString().toStdString());
    if (file.size() > kMaxScenarioFileBytes)
        throw Error(path.toStdString(), "is " + std::to_string(file.size()) + " bytes; scenario files are at most 1 MiB");
    return parse_scenario(file.read(kMaxScenarioFileBytes + 1), path, start);
}

QByteArray scenario_json(const Scenario& scenario) {
    QJsonArray steps;
    for (const ScenarioStep& s : scenario.steps) {
        QJsonObject o = setup_to_json(s.setup);
        o.insert(QStringLiteral("title"), s.title);
        if (!s.note.isEmpty()) o.insert(QStringLiteral("note"), s.note);
        if (!s.panel.isEmpty()) o.insert(QStringLiteral("panel"), s.panel);
        steps.append(o);
    }
    QJsonObject root;
    root.insert(QStringLiteral("name"), scenario.name);
    root.insert(QStringLiteral("steps"), steps);
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

void save_scenario(const QString& path, const Scenario& scenario) {
    const QByteArray text = scenario_json(scenario);
    write_file_atomically(path.toStdString(), std::string_view(text.constData(), static_cast<std::size_t>(text.size())));
}

Scenario setup_scenario(const PlannerSetup& setup, const QString& name) {
    Scenario s;
    s.name = name;
    s.steps.push_back({name, QString(), setup, QString()});
    return s;
}

}  // namespace quantplan::ui
