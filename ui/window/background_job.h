#pragma once
// Slow work off the GUI thread (STYLE.md rule 5): opening a large checkpoint, the KV-format
// what-if of a mixture-of-experts model, GPTQ on a real tensor. A job runs on its own thread,
// reports progress, polls a cancellation flag, and hands its result back to the GUI thread as a
// value. Starting a job while another runs cancels the older one: only the latest delivers.
#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>

#include <QtCore/QObject>
#include <QtCore/QString>

namespace quantplan::ui {

// Thrown inside a job by JobContext::check_cancelled(); the job then ends quietly.
class JobCancelled : public std::runtime_error {
public:
    JobCancelled() : std::runtime_error("cancelled") {}
};

// What a running job sees: a cancellation flag to poll and a progress sink. Thread-safe.
class JobContext {
public:
    virtual ~JobContext() = default;
    // True once the job was cancelled (by the user, a newer job or the window closing).
    virtual bool cancelled() const = 0;
    // Throws JobCancelled when cancelled(); call it between units of work.
    void check_cancelled() const {
        if (cancelled()) throw JobCancelled();
    }
    // Reports progress in percent (0..100) with a short text; delivered on the GUI thread.
    virtual void report(int percent, const QString& text) = 0;
};

// Runs one job at a time off the GUI thread and delivers its result on the GUI thread.
class BackgroundJob : public QObject {
    Q_OBJECT
public:
    explicit BackgroundJob(QObject* parent = nullptr);
    // Cancels every running job and waits for its thread to end.
    ~BackgroundJob() override;

    // Starts `work` on a new thread; on success `done` receives its result on the GUI thread.
    // An exception from `work` becomes failed(message); JobCancelled becomes cancelled().
    // A job still running is cancelled first and its result is dropped.
    template <typename Result>
    void start(const QString& label, std::function<Result(JobContext&)> work, std::function<void(Result)> done) {
        start_erased(label, [work = std::move(work), done = std::move(done)](JobContext& context) -> std::function<void()> {
            auto result = std::make_shared<Result>(work(context));
            return [done, result] { done(std::move(*result)); };
        });
    }

    // Cancels the running job, if any (its result will not be delivered).
    void cancel();

    // True while a job started by start() has not delivered, failed or been cancelled.
    bool isRunning() const { return running_; }

    // Blocks until every job thread has ended (tests; the destructor).
    void waitForThreads();

signals:
    // A job started (with its label), progressed, delivered, failed with a message, or was
    // cancelled. Emitted on the GUI thread, for the latest job only.
    void started(const QString& label);
    void progress(int percent, const QString& text);
    void finished();
    void failed(const QString& message);
    void cancelled();

private:
    // A job whose result is delivered by calling the returned function on the GUI thread.
    using ErasedWork = std::function<std::function<void()>(JobContext&)>;
    void start_erased(const QString& label, ErasedWork work);

    struct State;
    std::shared_ptr<State> current_;
    bool running_ = false;
};

}  // namespace quantplan::ui
