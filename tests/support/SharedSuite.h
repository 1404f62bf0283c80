#pragma once
// State a test suite sets up once (a server, a study), in the first of its tests that runs rather
// than in SetUpTestSuite: GoogleTest reports every test of a suite whose SetUpTestSuite failed as
// skipped, and ctest counts skips as passes. A failed set-up fails that test and every later one.
//
//   inline static test::SharedSuite<Shared> shared;   // shared->field inside the tests
//   void SetUp() override {
//     const bool ready = shared.prepareOnce(prepare);   // prepare() fills *shared, may set shared->skip
//     if (!shared->skip.empty()) MEDSEG_MISSING_COMPONENT(shared->skip);  // a failure with CI=true
//     ASSERT_TRUE(ready) << shared.failure();
//   }
//   static void TearDownTestSuite() { shared.reset(); }
// or, for a fixture that keeps its state in static members, SharedSuite<> and its SetUpTestSuite body
// as prepare.
#include <functional>
#include <memory>
#include <string>

#include <gtest/gtest.h>

namespace medseg::test {

// For suites whose state stays in their own static members: the set-up runs once, its failure kept.
struct NoSharedState {};

template <class State = NoSharedState>
class SharedSuite {
 public:
  // Runs prepare once (its gtest assertion failures mark the set-up failed); false when the set-up
  // failed, now or in an earlier test.
  bool prepareOnce(const std::function<void()>& prepare) {
    if (!state_) {
      state_ = std::make_unique<State>();
      prepare();
      if (::testing::Test::HasFailure()) failure_ = "the suite's set-up failed (see the first test's output)";
    }
    return failure_.empty();
  }
  const std::string& failure() const { return failure_; }
  State* operator->() const { return state_.get(); }
  State& operator*() const { return *state_; }
  void reset() {
    state_.reset();
    failure_.clear();
  }

 private:
  std::unique_ptr<State> state_;
  std::string failure_;
};

}  // namespace medseg::test
