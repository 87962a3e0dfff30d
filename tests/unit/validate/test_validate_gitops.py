"""GitOps settings of a cluster profile (generator/validate/gitops.py): a Flux repository named by `repoURL` or by
an existing GitRepository (`sourceRef`), never both; each tool's own settings only under that tool."""

from __future__ import annotations

from conftest import PROFILES, expect

CPU_LAB = (PROFILES / "clusters" / "cpu-lab.yaml").read_text(encoding="utf-8")
DGX_LAB = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
REPO_LINE = "  repoURL: https://git.example.com/platform/gpu-fleet.git\n"
assert CPU_LAB.splitlines()[18] == "gitops:" and CPU_LAB.endswith("  tool: flux\n" + REPO_LINE)
assert DGX_LAB.splitlines()[39] == "gitops:" and DGX_LAB.endswith("  tool: argocd\n" + REPO_LINE)
FLUX_SYSTEM = "  sourceRef:\n    name: flux-system\n"


def test_a_flux_source_ref_without_a_repository_url_passes(diagnose):
    outcome = diagnose({"clusters/cpu-lab.yaml": CPU_LAB.replace(REPO_LINE, FLUX_SYSTEM + "    namespace: flux-system\n"
                                                                            "    kind: GitRepository\n")})
    assert outcome.diagnostics == [], outcome.shown()


def test_a_flux_secret_ref_passes(diagnose):
    outcome = diagnose({"clusters/cpu-lab.yaml": CPU_LAB + "  secretRef: gpu-fleet-deploy-key\n"})
    assert outcome.diagnostics == [], outcome.shown()


def test_a_source_ref_beside_what_its_git_repository_already_says_is_refused(diagnose):
    cluster = CPU_LAB + FLUX_SYSTEM + "  revision: release-2\n  secretRef: gpu-fleet-deploy-key\n"
    outcome = diagnose({"clusters/cpu-lab.yaml": cluster})
    fix = "remove `sourceRef` to have mpigen write a GitRepository of its own"
    expect(outcome,
           ("clusters/cpu-lab.yaml", 21, 3, "`gitops.repoURL` has no effect with `gitops.sourceRef`: the GitRepository "
            "flux-system/flux-system holds its URL", f"remove `repoURL` (set it on that GitRepository), or {fix}"),
           ("clusters/cpu-lab.yaml", 24, 3, "`gitops.revision` has no effect with `gitops.sourceRef`: the "
            "GitRepository flux-system/flux-system holds its branch", fix),
           ("clusters/cpu-lab.yaml", 25, 3, "`gitops.secretRef` has no effect with `gitops.sourceRef`: the "
            "GitRepository flux-system/flux-system holds its credentials", fix))


def test_the_source_refs_namespace_defaults_to_the_gitops_namespace_in_the_message(diagnose):
    cluster = CPU_LAB + "  namespace: gitops\n" + FLUX_SYSTEM
    outcome = diagnose({"clusters/cpu-lab.yaml": cluster})
    expect(outcome, ("clusters/cpu-lab.yaml", 21, 3, "the GitRepository gitops/flux-system holds its URL"))


def test_no_repository_at_all_is_refused_at_the_gitops_key(diagnose):
    outcome = diagnose({"clusters/cpu-lab.yaml": CPU_LAB.replace(REPO_LINE, ""),
                        "clusters/dgx-lab.yaml": DGX_LAB.replace(REPO_LINE, "")})
    expect(outcome,
           ("clusters/cpu-lab.yaml", 19, 1, "`gitops` names no git repository", "add `repoURL:` (the repository "
            "holding the charts folder), or `sourceRef:` naming an existing GitRepository (`name: flux-system`"),
           ("clusters/dgx-lab.yaml", 40, 1, "`gitops` names no git repository",
            "add `repoURL:` (the repository holding the charts folder)"))
    assert "sourceRef" not in outcome.diagnostics[1].hint  # Argo CD has no GitRepository to point at


def test_flux_settings_under_argo_cd_are_refused(diagnose):
    cluster = DGX_LAB + FLUX_SYSTEM + "  secretRef: gpu-fleet-deploy-key\n"
    outcome = diagnose({"clusters/dgx-lab.yaml": cluster})
    expect(outcome,
           ("clusters/dgx-lab.yaml", 43, 3, "`gitops.sourceRef` is for Flux only; Argo CD reads the repository "
            "`repoURL` names", "remove it"),
           ("clusters/dgx-lab.yaml", 45, 3, "`gitops.secretRef` is for Flux only; Argo CD finds a private "
            "repository's credentials by its URL, in a repository or repo-creds Secret created outside git "
            "(`argocd repocreds add`)", "remove it"))


def test_applications_is_for_argo_cd_only(diagnose):
    ok = diagnose({"clusters/dgx-lab.yaml": DGX_LAB + "  applications: applicationset\n"})
    assert ok.diagnostics == [], ok.shown()
    outcome = diagnose({"clusters/cpu-lab.yaml": CPU_LAB + "  applications: applicationset\n"})
    expect(outcome, ("clusters/cpu-lab.yaml", 22, 3, "`gitops.applications` is for Argo CD only; Flux has no "
                     "ApplicationSets", "remove it"))


def test_an_unknown_applications_value_is_refused_by_the_schema(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": DGX_LAB + "  applications: application-set\n"})
    expect(outcome, ("clusters/dgx-lab.yaml", 43, 17, "gitops.applications", "applicationset"))


def test_a_source_ref_kind_flux_cannot_read_charts_from_is_refused_by_the_schema(diagnose):
    cluster = CPU_LAB.replace(REPO_LINE, FLUX_SYSTEM + "    kind: OCIRepository\n")
    outcome = diagnose({"clusters/cpu-lab.yaml": cluster})
    expect(outcome, ("clusters/cpu-lab.yaml", 23, 11, "gitops.sourceRef.kind", "GitRepository"))


def test_a_values_path_beside_the_charts_folder_passes(diagnose):
    outcome = diagnose({"clusters/cpu-lab.yaml": CPU_LAB + "  valuesPath: environments/cpu-lab\n",
                        "clusters/dgx-lab.yaml": DGX_LAB + "  path: deploy/charts\n  valuesPath: deploy/values\n"})
    assert outcome.diagnostics == [], outcome.shown()


def test_a_values_path_inside_the_charts_folder_is_refused(diagnose):
    outcome = diagnose({"clusters/cpu-lab.yaml": CPU_LAB + "  valuesPath: charts/values\n",
                        "clusters/dgx-lab.yaml": DGX_LAB + "  path: deploy\n  valuesPath: deploy\n"})
    fix = "put the values files in a folder of their own beside it (e.g. `environments/<cluster>`)"
    expect(outcome,
           ("clusters/cpu-lab.yaml", 22, 15, "`gitops.valuesPath` 'charts/values' is inside the charts folder "
            "'charts', which render writes and prunes", fix),
           ("clusters/dgx-lab.yaml", 44, 15, "`gitops.valuesPath` 'deploy' is inside the charts folder 'deploy'", fix))
