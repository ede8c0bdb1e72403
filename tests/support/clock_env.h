// ClockEnv: the real filesystem (Env::Default()) with the test's clock, so that code under test
// that takes an Env reads its time from a SimulatedClock (common/clock.h). Test-only; as
// thread-safe as the clock it is given.
#ifndef BENCHFLEET_TESTS_SUPPORT_CLOCK_ENV_H_
#define BENCHFLEET_TESTS_SUPPORT_CLOCK_ENV_H_

#include "common/clock.h"
#include "common/env.h"

namespace benchfleet::testing {

class ClockEnv : public EnvWrapper {
 public:
  explicit ClockEnv(Clock* clock) : EnvWrapper(Env::Default()), clock_(clock) {}
  Clock& clock() override { return *clock_; }

 private:
  Clock* clock_;
};

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_SUPPORT_CLOCK_ENV_H_
