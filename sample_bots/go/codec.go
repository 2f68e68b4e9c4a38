package main

// Debian's grpc-go 1.33 marshals messages with github.com/golang/protobuf 1.3
// (golang-github-golang-protobuf-1-3-dev), which predates the messages protoc-gen-go 1.28 makes
// and crashes on their oneofs. This codec puts google.golang.org/protobuf in its place under
// gRPC's own name, "proto" (registered after grpc's, so it wins). With golang/protobuf 1.4 or
// later (golang-github-golang-protobuf-1-5-dev) or the current grpc-go it is not needed, and
// changes nothing.

import (
	"fmt"

	"google.golang.org/grpc/encoding"
	"google.golang.org/protobuf/proto"
)

type codec struct{}

func (codec) Marshal(v interface{}) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("codec: %T is not a protobuf message", v)
	}
	return proto.Marshal(m)
}

func (codec) Unmarshal(data []byte, v interface{}) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("codec: %T is not a protobuf message", v)
	}
	return proto.Unmarshal(data, m)
}

func (codec) Name() string { return "proto" }

func init() { encoding.RegisterCodec(codec{}) }
