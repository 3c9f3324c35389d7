import Foundation
import Testing
@testable import Courier

/// The pause decision the http and ftp handlers share, on the interleavings a real transfer can
/// only hit by chance (`HTTPHeavyTests.PauseWakeUp` stresses them against nginx).
@Suite("libcurl flow control")
struct CurlFlowControlTests {
    @Test func pausesWhenTheConsumerIsFullAndWakesOnce() {
        let gate = CurlFlowControl()
        #expect(!gate.shouldPause(asking: { true }))
        #expect(gate.shouldPause(asking: { false }))
        // Still paused: a write callback while paused pauses again without asking.
        #expect(gate.shouldPause(asking: { Issue.record("asked while paused"); return true }))
        #expect(gate.wake(), "the paused transfer is unpaused")
        #expect(!gate.wake(), "a second wake-up has nothing to unpause")
        #expect(!gate.shouldPause(asking: { true }))
    }

    @Test func aWakeUpBetweenTheAnswerAndThePauseIsNotLost() {
        // The consumer says "no more", and its wake-up lands before the handler paused: the handler
        // asks again instead of pausing with nobody left to wake it.
        let gate = CurlFlowControl()
        var asked = 0
        let paused = gate.shouldPause(asking: {
            asked += 1
            if asked == 1 {
                #expect(!gate.wake(), "not paused yet: the wake-up is remembered")
                return false
            }
            return true
        })
        #expect(!paused)
        #expect(asked == 2)
    }

    @Test func aWakeUpBeforeTheNextPieceDoesNotSkipTheQuestion() {
        // A wake-up while the transfer runs (not about to pause) is forgotten at the next piece:
        // the consumer's "no more" then pauses.
        let gate = CurlFlowControl()
        #expect(!gate.wake())
        #expect(gate.shouldPause(asking: { false }))
        #expect(gate.wake())
    }

    @Test func resetForgetsAPause() {
        let gate = CurlFlowControl()
        #expect(gate.shouldPause(asking: { false }))
        gate.reset()
        #expect(!gate.wake(), "a new transfer is not paused")
        #expect(!gate.shouldPause(asking: { true }))
    }
}
