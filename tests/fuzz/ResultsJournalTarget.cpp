// results.jsonl: a killed search may leave any torn or garbled line; reading must turn each into a
// warning and keep every complete record, and a record that was read must write back unchanged.
#include "cluster/search/ResultsJournal.h"
#include "fuzz/FuzzTargets.h"

namespace medseg::fuzz {

void resultsJournal(const uint8_t* data, size_t size) {
  acceptedOrRefused([&] {
    cluster::ResultsJournal journal(processScratch() / "results.jsonl");
    journal.parse(asText(data, size));
    for (const auto& record : journal.records()) {
      const std::string line = record.toJson().dump();
      cluster::TrialRecord again;
      try {
        again = cluster::TrialRecord::fromJson(nlohmann::json::parse(line));
      } catch (const std::exception& error) {
        throw InvariantViolation("a trial record that was read does not read back: " + std::string(error.what()) + "\n" + line);
      }
      if (again.toJson() != record.toJson()) throw InvariantViolation("a trial record reads back differently: " + line);
    }
    (void)journal.completedKeys();
    (void)journal.latestByKey();
  });
}

}  // namespace medseg::fuzz
