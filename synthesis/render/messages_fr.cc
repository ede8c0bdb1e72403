#include "synthesis/render/messages.h"

namespace benchfleet::synthesis {

const Messages& MessagesFr() {
  static const Messages m{
      .title = "Guide de dimensionnement",
      .simulated = "SIMULÉ",
      .simulated_note = "**Attention :** certains de ces enregistrements sont simulés ; les chiffres ne décrivent "
                        "pas un matériel réel.",
      .sources_note = "Chaque chiffre est suivi de l'identifiant de sa source, par ex. `[S3]`. Le fichier "
                      "`sources.csv` liste chaque source : ses exécutions, leur provenance (fichier:ligne pour les "
                      "fichiers importés) et, pour un chiffre dérivé, l'opération (min, max, médiane, `q1`, `q3`, `cv`, l'intervalle de la médiane `median_ci_low` et "
                      "`median_ci_high`, décompte, cible, ou formule sur d'autres sources) et "
                      "ses entrées.",
      .numbers_note = "Nombres : `3` chiffres significatifs (la partie entière toujours gardée), virgule décimale. "
                      "La médiane apparaît à partir de `5` exécutions retenues ; au-delà de `20`, "
                      "min/`q1`/médiane/`q3`/max remplacent la liste. Les exécutions servies par un cache et celles en "
                      "échec sont listées mais n'entrent dans aucun chiffre.",
      .spread_note = "À côté de chaque médiane, à partir de {min_runs} exécutions retenues : l'intervalle de confiance "
                     "à {level} de la médiane (un bootstrap des percentiles de {resamples} rééchantillonnages tirés "
                     "d'une graine fixe, si bien que les mêmes exécutions donnent toujours le même intervalle ; calculé "
                     "jusqu'à {max_runs} exécutions) et le coefficient de variation (CV : l'écart-type rapporté à la "
                     "moyenne). En deçà de {min_runs} exécutions, les exécutions elles-mêmes sont listées, sans "
                     "dispersion : si peu d'appels disent peu de chose du bruit d'un réglage.",
      .spread_ci = "IC à {level} {low} – {high}",
      .spread_cv = "CV {cv} %",
      .newest_record = "Enregistrement le plus récent utilisé : démarré le",
      .skipped_section = "Entrées ignorées",
      .skipped_none = "Aucune : toutes les entrées ont été lues.",
      .skipped_count = "entrées ignorées (illisibles, ou un enregistrement hors d'une borne de README.md « Record bounds ») :",
      .table_section = "Résultats par tâche",
      .task = "Tâche",
      .chart_alt = "Chiffre par rang d'appel",
      .col_machine = "Machine",
      .col_backend = "Moteur",
      .col_mode = "Mode",
      .col_matrix = "Matrice",
      .col_phase = "Phase",
      .col_metric = "Mesure",
      .col_runs = "Exécutions retenues (dans l'ordre)",
      .col_range = "Min–max",
      .col_median = "Médiane (intervalle, CV)",
      .col_excluded = "Exécutions exclues",
      .distribution = "distribution",
      .dist_min = "min",
      .dist_q1 = "`q1`",
      .dist_median = "médiane",
      .dist_q3 = "`q3`",
      .dist_max = "max",
      .none_value = "—",
      .phase_validation = "validation",
      .phase_cold = "à froid",
      .phase_warm = "à chaud",
      .phase_unspecified = "non précisée",
      .traps_section = "Tous les signalements",
      .cache_hits = "Exécutions servies par un cache (exclues)",
      .throughput_drops = "Chutes de débit inexpliquées",
      .failed_runs = "Exécutions en échec",
      .other_flags = "Autres signalements",
      .drops_throttled = "Chutes de débit pendant un bridage de l'accélérateur",
      .drops_contended = "Chutes de débit sur un hôte occupé (CONTENDED)",
      .no_trap = "Aucun.",
      .run = "exécution",
      .call = "appel",
      .chart_title = "Chiffre par rang d'appel",
      .chart_desc = "Une ligne par cellule (machine, moteur, mode, matrice, phase) : le chiffre des exécutions "
                    "retenues selon le rang d'appel. Cercles : à chaud ; carrés : à froid ; triangles : autres phases.",
      .x_axis = "Rang d'appel",
      .legend_warm = "à chaud",
      .legend_cold = "à froid",
      .legend_other = "autre",
      .outputs_section = "Sorties des mêmes entrées",
      .outputs_intro = "Les exécutions d'une même tâche, d'un même mode et d'un même réglage qui reçoivent les "
                       "mêmes entrées avec des réglages déterministes (température `0` et graine fixe, ou graphe "
                       "ComfyUI avec sa graine : le `inputs_sha256` de l'enregistrement) devraient donner les mêmes "
                       "sorties à chaque exécution et sur chaque machine, sauf si leur spécification en dispose "
                       "autrement (`outputs.deterministic`). Les exécutions écartées des chiffres (servies par un "
                       "cache, échouées ou invalidées) ne sont pas comparées. Une empreinte est abrégée à ses `12` "
                       "premiers chiffres hexadécimaux ; chaque exécution est désignée par son identifiant court et "
                       "sa source.",
      .outputs_inputs = "{setting}, entrées {inputs} : ",
      .outputs_same = "la même sortie {output} à chaque exécution : {runs} exécutions, sur {on}.",
      .outputs_mismatch = "`OUTPUT_MISMATCH` : {mismatched} des {runs} exécutions diffèrent de {output}, la sortie "
                          "de la première exécution de ces entrées, {run} ({machine}, {phase}, appel {call}) :",
      .outputs_mismatch_run = "{machine} : l'exécution {run} {ref} ({phase}, appel {call}) a donné {found}",
      .outputs_groups = "{distinct} sorties distinctes sur {runs} exécutions ({rule}) : {groups}.",
      .outputs_group = "{output} sur {on}",
      .outputs_per_machine = "les machines peuvent différer : `outputs.deterministic: per_machine`",
      .outputs_not_expected = "aucune concordance exigée : `outputs.deterministic: false`",
      .cond_section = "Annexe : conditions des machines",
      .cond_intro = "Une entrée par série : les exécutions qui partagent une empreinte de conditions (mesures en "
                    "direct), ou celles d'un fichier importé sur une machine. Versions, dates et tailles sont "
                    "citées telles qu'enregistrées.",
      .cond_none = "Aucune série.",
      .cond_machine = "Machine",
      .cond_class = "classe",
      .cond_os = "Système d'exploitation",
      .cond_kernel = "noyau",
      .cond_architecture = "architecture",
      .cond_cpu = "Processeur",
      .cond_cores = "cœurs logiques",
      .cond_memory = "Mémoire de l'hôte",
      .cond_accelerator = "Accélérateur",
      .cond_vendor = "fabricant",
      .cond_driver = "pilote",
      .cond_accel_memory = "mémoire de l'accélérateur",
      .cond_backend_versions = "Versions des moteurs",
      .cond_agent_version = "Version de l'agent",
      .cond_series_ids = "Identifiants de série",
      .cond_tasks = "Tâches",
      .cond_backends = "Moteurs",
      .cond_settings = "Réglages communs à toutes les exécutions",
      .cond_ran_on = "Ce sur quoi chaque mode a tourné, selon le serveur",
      .cond_offloaded = "couches déchargées",
      .cond_backend_attributes = "Déclaré par le serveur mesuré",
      .cond_matrix = "Combinaisons de la matrice",
      .cond_dates = "Premier et dernier démarrage (UTC)",
      .cond_runs = "Exécutions",
      .cond_ok_runs = "Exécutions réussies",
      .cond_fingerprint = "Empreinte des conditions",
      .cond_file = "Fichier importé",
      .cond_unknown = "Conditions de la machine inconnues (pas de conditions.json pour cette série).",
      .further_heading = "Autres chiffres principaux",
      .further_note = "tels que chaque backend les déclare ; la médiane sur les exécutions retenues qui portent le "
                      "chiffre quand il y en a au moins cinq, sinon leur étendue",
      .mem_heading = "Mémoire",
      .mem_note = "pic par nature et par portée sur les exécutions retenues ; chaque nature est une mesure distincte",
      .mem_bytes = "octets",
      .mem_kind_unspecified = "mémoire de nature non précisée",
      .mem_kind_process_peak_rss = "pic de RSS du processus (mémoire hôte)",
      .mem_kind_process_footprint = "empreinte du processus (mémoire hôte, macOS)",
      .mem_kind_device_used = "mémoire de l'accélérateur occupée (appareil entier)",
      .mem_kind_device_buffer = "tampon sur l'accélérateur déclaré par le moteur",
      .mem_kind_container_peak = "pic mémoire du conteneur (hôte)",
      .mem_kind_host_buffer = "tampon en mémoire hôte déclaré par le moteur",
      .mem_kind_buffer_unknown = "tampon déclaré par le moteur sur un périphérique que son journal ne nomme pas (ni mémoire hôte ni mémoire du périphérique)",
      .duration_title = "Durée de chaque exécution",
      .duration_desc = "Une colonne par cellule (machine, moteur, mode, matrice, phase) : la durée mesurée de chaque "
                       "exécution retenue, en point, décalé sur le côté pour qu'aucun n'en cache un autre. Cercles : "
                       "à chaud ; carrés : à froid ; triangles : autres phases. Les exécutions exclues (cache, "
                       "échecs) ne sont pas tracées.",
      .duration_y_axis = "Durée mesurée (s)",
      .memory_title = "Pic mémoire par nature",
      .memory_desc = "Pic mémoire de chaque cellule par nature et par portée, en Gio. La mémoire de l'accélérateur "
                     "et la mémoire hôte (processus, conteneurs, tampons hôte) sont tracées dans deux panneaux "
                     "distincts, chacun avec son axe.",
      .memory_panel_device = "Mémoire de l'accélérateur",
      .memory_panel_host = "Mémoire hôte (processus, conteneurs, tampons hôte)",
      .gib = "Gio",
      .binned_about = "regroupées : environ",
      .binned_per_mark = "exécutions par marque",
      .runs_word = "exécutions",
      .reg_section = "Contrôles de régression",
      .reg_intro = "Le dernier contrôle du coordinateur pour chaque machine, tâche et réglage : les exécutions d'une "
                   "série (l'échantillon) comparées aux exécutions antérieures de la même machine pour ce réglage "
                   "(la référence). Une régression ou une amélioration exige à la fois une différence significative "
                   "et un écart de la médiane au-delà du seuil. sources.csv liste les exécutions de chaque compte.",
      .reg_none_found = "Aucune régression, aucune amélioration.",
      .reg_others = "Autres contrôles",
      .reg_regression = "Régression",
      .reg_improvement = "Amélioration",
      .reg_no_change = "Pas de changement",
      .reg_not_significant = "Non significatif",
      .reg_baseline_too_small = "Référence trop petite",
      .reg_sample_too_small = "Échantillon trop petit",
      .reg_medians = "{figure} : médiane {sample} contre {baseline} ({change}, seuil {threshold})",
      .reg_test = "{test} : {p}",
      .reg_no_test = "pas de test, il faut {needed} exécutions de référence",
      .reg_needs = "(il faut {needed} exécutions)",
      .reg_never = "(aucun échantillon de 100 exécutions au plus ne pourrait atteindre le niveau)",
      .reg_runs = "exécutions : {sample} contre {baseline} dans la référence ({runs})",
  };
  return m;
}

}  // namespace benchfleet::synthesis
