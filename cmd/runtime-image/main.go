// Command runtime-image builds the runtime image of a composition function
// without Docker: an image from scratch holding one static binary at
// /function, run as user 65532 with entrypoint [/function]. It writes the
// image as a tarball (the `docker save` layout) that `crossplane xpkg build
// --embed-runtime-image-tarball` embeds into the Function package.
//
// The image is reproducible: the same binary gives the same digest (fixed
// file times, no creation timestamp).
package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/alecthomas/kong"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const (
	entrypoint = "/function"
	// grpcPort is where a function serves by default (--address=:9443).
	grpcPort = "9443/tcp"
)

type cli struct {
	Binary string `help:"Static linux binary of the function (CGO_ENABLED=0)." required:"" type:"existingfile"`
	Output string `help:"Image tarball to write."                                required:"" type:"path"`
	Tag    string `default:"tenantkube/function-runtime:latest" help:"Tag recorded in the tarball's manifest."`
	Arch   string `default:"amd64"  help:"Architecture of the binary (GOARCH)."`
	User   string `default:"65532"  help:"User the function runs as."`
}

func main() {
	c := &cli{}
	ctx := kong.Parse(c, kong.Name("runtime-image"),
		kong.Description("Build a composition function's runtime image from a static binary, without Docker."))
	ctx.FatalIfErrorf(c.run())
}

func (c *cli) run() error {
	bin, err := os.ReadFile(c.Binary)
	if err != nil {
		return err
	}
	layerTar, err := binaryLayer(bin)
	if err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return fmt.Errorf("cannot create layer: %w", err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return fmt.Errorf("cannot add layer: %w", err)
	}

	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.OS = "linux"
	cfg.Architecture = c.Arch
	cfg.Config.Entrypoint = []string{entrypoint}
	cfg.Config.Cmd = nil
	cfg.Config.User = c.User
	cfg.Config.WorkingDir = "/"
	cfg.Config.ExposedPorts = map[string]struct{}{grpcPort: {}}
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.source": "https://github.com/tenantkube/tenantkube",
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return fmt.Errorf("cannot set image config: %w", err)
	}

	ref, err := name.NewTag(c.Tag, name.WeakValidation)
	if err != nil {
		return fmt.Errorf("bad --tag %q: %w", c.Tag, err)
	}
	if err := tarball.WriteToFile(c.Output, ref, img); err != nil {
		return fmt.Errorf("cannot write %s: %w", c.Output, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "runtime-image: wrote %s (%s, %s)\n", c.Output, ref, digest) //nolint:errcheck // informational
	return nil
}

// binaryLayer returns an uncompressed tar holding bin at /function, owned by
// root and executable by everyone, with a fixed modification time.
func binaryLayer(bin []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     entrypoint[1:],
		Mode:     0o755,
		Size:     int64(len(bin)),
		ModTime:  time.Unix(0, 0).UTC(),
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
