//go:build race

package slack_test

// raceDetector reports whether the tests run under -race, where the bot's
// every step costs several times its usual CPU.
const raceDetector = true
