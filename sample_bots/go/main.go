// The Go starter kit: a whole referee bot with Debian's grpc-go (golang-google-grpc-dev 1.33) and
// protobuf (golang-google-protobuf-dev 1.28), built in GOPATH mode with nothing downloaded.
//
//	make                # stubs from proto/referee/v1/referee.proto, then ./bot (see the Makefile)
//	./bot --address HOST:PORT --name NAME --token TOKEN [--capacity N]
//
// A tournament's launcher starts it with --address unix:/run/referee/referee.sock --name NAME
// --token-fd 3 --capacity N (docs/protocol.md §15). It reads the typed observation (Hello.DataForm
// = DATA_TYPED: no JSON) and plays both games by a few plain rules, the same as the other starter
// kits': enough to beat the random bot. Replace choose with your own.
//
// A panic in choose ends the process: its seats are charged a disconnect and the launcher starts it
// again before its next match. To play on instead, recover and answer the request with
// Choice: &pb.ActionReply_Error{Error: ...} in place of the index: an error fault (docs/protocol.md §4).
//
// grpc.Dial and grpc.WithInsecure are grpc-go 1.33's; the current grpc-go still has them
// (deprecated) and offers grpc.NewClient(address, grpc.WithTransportCredentials(insecure.NewCredentials()))
// instead (docs/protocol.md §13).
//
// Exit codes: 0 the referee ended the session, 1 the stream broke, 2 bad usage, 3 refused.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"google.golang.org/grpc"

	pb "refereekit/referee/v1"
)

// ---------------------------------------------------------------- cards and actions

const ranks = "23456789TJQKA"

func rank(card string) int { return strings.IndexByte(ranks, card[0]) } // 0 (two) .. 12 (ace)

func isCard(a string) bool {
	return len(a) == 2 && strings.IndexByte(ranks, a[0]) >= 0 && strings.IndexByte("SHDC", a[1]) >= 0
}

func find(legal []string, name string) int {
	for i, a := range legal {
		if a == name {
			return i
		}
	}
	return -1
}

// closest is the index of the legal "WORD n" whose n is nearest to target (ties: the lower n), or -1.
func closest(legal []string, word string, target int) int {
	best, bestGap := -1, 1<<30
	for i, a := range legal {
		if !strings.HasPrefix(a, word+" ") {
			continue
		}
		n, err := strconv.Atoi(a[len(word)+1:])
		if err != nil {
			continue
		}
		gap := n - target
		if gap < 0 {
			gap = -gap
		}
		if gap < bestGap {
			best, bestGap = i, gap
		}
	}
	return best
}

// extremeCard is the index of the legal card of the highest (or lowest) strength.
func extremeCard(legal []string, strength func(string) int, highest bool) int {
	best, bestValue := -1, 0
	for i, a := range legal {
		if !isCard(a) {
			continue
		}
		v := strength(a)
		if best < 0 || (highest && v > bestValue) || (!highest && v < bestValue) {
			best, bestValue = i, v
		}
	}
	return best
}

// ---------------------------------------------------------------- Confirmation (docs/protocol.md §9)

// estimate is the number of tricks these cards should take.
func estimate(obs *pb.ConfirmationObservation) int {
	trumps, aces, high := 0, 0, 0
	for _, c := range obs.Hand {
		if c[1] == obs.Trump[0] {
			trumps++
			if rank(c) >= 10 {
				high++
			}
		} else if rank(c) == 12 {
			aces++
		}
	}
	if trumps > 3 {
		high += trumps - 3
	}
	return aces + high
}

func playConfirmation(obs *pb.ConfirmationObservation, legal []string) int {
	if obs.Phase == "bid" {
		return closest(legal, "BID", estimate(obs))
	}
	won, bid := int(obs.TricksWon[obs.Seat]), int(obs.BidsInForce[obs.Seat])
	if obs.Phase == "confirm" { // keep the bid unless the cards now promise quite another count
		expected := won + estimate(obs)
		if revise := closest(legal, "REVISE", expected); revise >= 0 && (expected-bid >= 2 || bid-expected >= 2) {
			return revise
		}
		return find(legal, "CONFIRM")
	}
	// trick play: the strongest card while short of the bid, else the weakest
	strength := func(c string) int {
		if c[1] == obs.Trump[0] {
			return rank(c) + 13
		}
		return rank(c)
	}
	return extremeCard(legal, strength, won < bid)
}

// ---------------------------------------------------------------- Aegis (docs/protocol.md §10)

func aegisStrength(obs *pb.AegisObservation, card string) int {
	if card[1] == obs.Trump[0] {
		return 30 + rank(card)
	}
	for _, k := range obs.Killers {
		if k == card {
			return 20
		}
	}
	if rank(card) == 12 {
		return 9 // an ace beats only faces: about a jack
	}
	return rank(card)
}

func playAegis(obs *pb.AegisObservation, legal []string) int {
	switch obs.Phase {
	case "exchange":
		// discard the weak cards (below a ten, no trump, no killer); the legal names list the cards
		// in canonical order, as the hand is, so the wanted name is built in that order
		wanted, weak := "EXCHANGE", 0
		for _, c := range obs.Hand {
			if aegisStrength(obs, c) < 8 {
				wanted += " " + c
				weak++
			}
		}
		if obs.Role == "master" { // exchange once at most, and only a bad hand
			if obs.E == 0 && weak >= 2 {
				return find(legal, wanted)
			}
			return find(legal, "STOP")
		}
		if weak > 0 {
			return find(legal, wanted)
		}
		return 0 // the bare EXCHANGE, keeping the hand
	case "declare":
		strong, declare := 0, closest(legal, "DECLARE", 0) // the least declaration allowed
		for _, c := range obs.Hand {
			if aegisStrength(obs, c) >= 20 {
				strong++
			}
		}
		if obs.Role == "slave" && (strong < 3 || declare < 0) && find(legal, "PASS") >= 0 {
			return find(legal, "PASS")
		}
		return declare
	}
	// trick play: the attacker plays its strongest card, the defender its weakest
	attacking := obs.Attacker != nil && *obs.Attacker == obs.Seat
	return extremeCard(legal, func(c string) int { return aegisStrength(obs, c) }, attacking)
}

// choose is the index in request.LegalActions to play; anything amiss falls back to 0, the referee's default.
func choose(request *pb.DecisionRequest) int {
	choice := 0
	switch observation := request.Observation.(type) {
	case *pb.DecisionRequest_Confirmation:
		choice = playConfirmation(observation.Confirmation, request.LegalActions)
	case *pb.DecisionRequest_Aegis:
		choice = playAegis(observation.Aegis, request.LegalActions)
	}
	if choice < 0 || choice >= len(request.LegalActions) {
		return 0
	}
	return choice
}

// ---------------------------------------------------------------- the session

func usage(why string) {
	fmt.Fprintln(os.Stderr, why)
	fmt.Fprintln(os.Stderr, "usage: bot --address HOST:PORT|unix:PATH --name NAME [--token TOKEN | --token-fd FD] [--capacity N]")
	os.Exit(2)
}

// tokenFromFd is the token the launcher wrote into descriptor fd: its first line, spaces stripped; fd is closed.
func tokenFromFd(fd int) string {
	f := os.NewFile(uintptr(fd), "token")
	if f == nil {
		usage(fmt.Sprintf("cannot read the token from --token-fd %d", fd))
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && err != io.EOF {
		usage(fmt.Sprintf("cannot read the token from --token-fd %d: %v", fd, err))
	}
	return strings.TrimSpace(line)
}

func main() {
	address := flag.String("address", "127.0.0.1:50051", "the referee: HOST:PORT or unix:PATH")
	name := flag.String("name", "go-bot", "the bot's name")
	token := flag.String("token", "", "the bot's token (for a bot started by hand)")
	tokenFd := flag.Int("token-fd", -1, "read the token from this inherited descriptor (as the launcher gives it)")
	capacity := flag.Int("capacity", 1, "how many seats to play at once")
	flag.Parse()
	if *tokenFd >= 0 {
		if *token != "" {
			usage("give --token or --token-fd, not both")
		}
		*token = tokenFromFd(*tokenFd)
	}

	// grpc-go 1.33 (Debian 12); with the current grpc-go, grpc.NewClient and insecure.NewCredentials()
	conn, err := grpc.Dial(*address, grpc.WithInsecure())
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: cannot dial %s: %v\n", *name, *address, err)
		os.Exit(1)
	}
	defer conn.Close()
	stream, err := pb.NewRefereeClient(conn).Play(context.Background()) // keep it open: closing it ends the session
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", *name, err)
		os.Exit(1)
	}
	hello := &pb.Hello{ProtocolVersion: 1, BotName: *name, Token: *token, Capacity: uint32(*capacity),
		DataForm: pb.DataForm_DATA_TYPED} // the typed observation only: no JSON to parse
	if err := stream.Send(&pb.BotMessage{Kind: &pb.BotMessage_Hello{Hello: hello}}); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", *name, err)
		os.Exit(1)
	}
	for {
		message, err := stream.Recv()
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: stream ended: %v\n", *name, err)
			os.Exit(1)
		}
		switch kind := message.Kind.(type) {
		case *pb.RefereeMessage_Welcome:
			fmt.Fprintf(os.Stderr, "%s: session %s on %s\n", *name, kind.Welcome.SessionId, kind.Welcome.Server)
		case *pb.RefereeMessage_Refusal:
			fmt.Fprintf(os.Stderr, "%s: refused (%s): %s\n", *name, kind.Refusal.Reason, kind.Refusal.Message)
			os.Exit(3)
		case *pb.RefereeMessage_Request:
			r := kind.Request
			reply := &pb.ActionReply{RequestId: r.RequestId, GameId: r.GameId, Seat: r.Seat,
				Choice: &pb.ActionReply_Index{Index: uint32(choose(r))}}
			if err := stream.Send(&pb.BotMessage{Kind: &pb.BotMessage_Action{Action: reply}}); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", *name, err)
				os.Exit(1)
			}
		case *pb.RefereeMessage_Result: // a substitution: the referee played another action (a fault)
			fmt.Fprintf(os.Stderr, "%s: %s seat %d: the referee played %s: %s\n", *name, kind.Result.GameId,
				kind.Result.Seat, kind.Result.Action, kind.Result.Reason)
		}
	}
}
