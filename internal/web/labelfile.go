package web

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/internal/pipeline"
)

// maxUpload is the largest label file an import takes.
const maxUpload = 32 << 20

// labelsView is the labelling page: who is labelling, the queue, and label
// files in and out.
type labelsView struct {
	Menus     menus
	Filter    filter
	Labelled  int // traces the labeller has labelled
	Left      int // traces of the selection left to them
	Sources   []string
	Formats   []string
	Imported  *importResult
	NameError string
}

// importResult says what an import did.
type importResult struct {
	File   string
	Source string
	Stored int
	Issues []string
}

func (s *Server) labelsPage(w http.ResponseWriter, r *http.Request) {
	f, err := parseFilter(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := s.labelsView(r, f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "labels", "", view{Title: "Label", Nav: "labels", Body: v})
}

func (s *Server) labelsView(r *http.Request, f filter) (*labelsView, error) {
	ctx := r.Context()
	v := &labelsView{Filter: f, Formats: labels.WriteFormats}
	var err error
	if v.Menus, err = s.menus(r); err != nil {
		return nil, err
	}
	all, err := s.cfg.Store.AllSources(ctx)
	if err != nil {
		return nil, err
	}
	// Human labels first: they are what this page is for.
	v.Sources = slices.Concat(
		slices.DeleteFunc(slices.Clone(all), func(s string) bool { return !strings.HasPrefix(s, "human:") }),
		slices.DeleteFunc(slices.Clone(all), func(s string) bool { return strings.HasPrefix(s, "human:") }))
	if source := labellerSource(r); source != "" {
		if v.Labelled, err = s.cfg.Store.LabelledTraces(ctx, source); err != nil {
			return nil, err
		}
		f.Todo = true
		if v.Left, err = s.cfg.Store.Count(ctx, f.query(source, s.cfg.Aliases)); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// exportLabels downloads one source's labels in faultline's label format.
func (s *Server) exportLabels(w http.ResponseWriter, r *http.Request) {
	source, format := r.URL.Query().Get("source"), r.URL.Query().Get("format")
	if source == "" || !slices.Contains(labels.WriteFormats, format) {
		s.fail(w, r, badRequestf("export needs a source and a format (%s)", strings.Join(labels.WriteFormats, ", ")))
		return
	}
	ls, err := s.cfg.Store.ExportLabels(r.Context(), source)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	types := map[string]string{"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}
	name := strings.Map(func(r rune) rune {
		if r == ':' || r == '/' || r == '\\' || r == '"' {
			return '-'
		}
		return r
	}, source)
	s.sendFile(w, r, types[format], fmt.Sprintf("labels-%s.%s", name, format), func(w io.Writer) error { return labels.Write(w, format, ls) })
}

// importLabels reads an uploaded label file into a human source: the
// labeller's own, or the one the form names.
func (s *Server) importLabels(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if name == "" {
		name = labellerOf(r)
	}
	source, err := labels.HumanSource(name)
	if err != nil {
		s.fail(w, r, badRequest{"name the labeller whose labels these are: " + err.Error()})
		return
	}
	file, header, err := r.FormFile("file")
	if err != nil {
		s.fail(w, r, badRequestf("choose a label file to import"))
		return
	}
	defer file.Close()
	data, err := io.ReadAll(file)
	if err != nil {
		s.fail(w, r, badRequestf("reading the upload: %v", err))
		return
	}
	res := &importResult{File: header.Filename, Source: source}
	set, issues := labels.Parse(header.Filename, data)
	stored, more, err := pipeline.ImportLabels(r.Context(), s.cfg.Store, set, res.Source)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res.Stored = stored
	for _, i := range append(issues, more...) {
		res.Issues = append(res.Issues, issueText(i))
	}
	s.log.Info("labels imported", "file", header.Filename, "source", res.Source, "stored", stored, "issues", len(res.Issues))
	v, err := s.labelsView(r, filter{})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v.Imported = res
	s.render(w, r, http.StatusOK, "labels", "", view{Title: "Label", Nav: "labels", Body: v})
}

func issueText(i ingest.Issue) string {
	return fmt.Sprintf("%s: %s", i.Severity, i)
}
